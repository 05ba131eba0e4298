/* C++ symbol names read as perf prints them: demangled by libiberty, without parameter lists. */
#ifndef DBTAP_TARGET_DEMANGLE_H
#define DBTAP_TARGET_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest mangled name demangled, and longest result kept; longer ones stay mangled. */
#define DEMANGLE_IN_MAX  4096
#define DEMANGLE_OUT_MAX 2048

/*
 * Whether name is a C++ (Itanium ABI) mangled name, and if so its demangled form in
 * out (len bytes, at least DEMANGLE_OUT_MAX + 1 for every name to fit): "ns::f",
 * "ns::Acc<long>::spin", without parameters, return type or qualifiers, as perf
 * report and perf script print them (c++filt -p reads the same, but spells the
 * standard library's abbreviations out: std::string for std::basic_string<char>).
 * false leaves out untouched: not mangled, malformed, or longer than the bounds.
 * name comes from the traced program's files: nothing in it is trusted.
 */
bool demangle(const char *name, char *out, size_t len);

#endif
