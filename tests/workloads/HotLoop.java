/*
 * A JVM target for dbtap profile: the thread "hot-worker" spends its time in
 * HotLoop.spin (compiled by the JIT, named by the JVM's own perf map), the thread
 * "alloc-worker" makes garbage so that the collector's threads run too. Prints
 * "ready PID", then runs until killed. Built by `make workloads` when javac is there.
 */
public class HotLoop {
    static volatile long sink;
    /* kept, so that the allocations escape and are not optimized away */
    static final byte[][] keep = new byte[1024][];

    static long spin(long n) {
        long s = 0;
        for (long i = 0; i < n; i++)
            s += (i * i) ^ (s >>> 3);
        return s;
    }

    public static void main(String[] args) throws Exception {
        Thread hot = new Thread(() -> {
            for (;;)
                sink += spin(1_000_000);
        }, "hot-worker");
        Thread alloc = new Thread(() -> {
            for (int i = 0;; i++)
                keep[i & 1023] = new byte[4096];
        }, "alloc-worker");
        hot.setDaemon(true);
        alloc.setDaemon(true);
        hot.start();
        alloc.start();
        System.out.println("ready " + ProcessHandle.current().pid());
        Thread.sleep(Long.MAX_VALUE);
    }
}
