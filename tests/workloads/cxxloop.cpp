/*
 * A C++ target for dbtap profile's demangling: its hot frames have mangled names, a
 * function in nested namespaces, a member of a class template and a function
 * template, so that each one's name reads as c++filt prints it.
 *
 *   cxxloop    prints "ready PID", then runs until killed
 */
#include <cstdio>
#include <unistd.h>

volatile unsigned long cxxloop_sink;

namespace dbtap_wl {
namespace inner {

template <typename T> struct Acc {
	T total;
	__attribute__((noinline)) T spin(T n);
};

/*
 * The hot loops keep a counter on the stack: gcc 12 sets up no frame pointer in a leaf
 * function that has no stack frame, even with -mno-omit-leaf-frame-pointer, and the
 * unwinder would then skip the caller.
 */
template <typename T> T Acc<T>::spin(T n)
{
	volatile T i;

	for (i = 0; i < n; i = i + 1)
		cxxloop_sink = cxxloop_sink + (unsigned long)i;
	total += n;
	return total;
}

} // namespace inner

template <typename T> __attribute__((noinline)) T twice(T n)
{
	volatile T i;

	for (i = 0; i < 2 * n; i = i + 1)
		cxxloop_sink = cxxloop_sink + (unsigned long)i;
	return n;
}

namespace inner {
__attribute__((noinline)) long work(int rounds)
{
	Acc<long> a = { 0 };
	long r = 0;
	for (int i = 0; i < rounds; i++)
		r += a.spin(200000) + twice<unsigned int>(100000);
	return r;
}
} // namespace inner
} // namespace dbtap_wl

int main()
{
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		dbtap_wl::inner::work(100);
}
