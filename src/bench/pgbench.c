/* dbtap bench pgbench: pgbench TPS untraced and with dbtap's tracing commands attached. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/pgbench.h"
#include "cmd/cmd.h"
#include "pg/cluster.h"
#include "target/proc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/runloop.h"

/* Each transaction assigns an XID, so `watch xid` fires once per transaction. */
static const char script_text[] = "SELECT txid_current();\n";

struct tracer {
	const char *name;    /* the row's name */
	const char *cmd;     /* dbtap command */
	const char *const args[6];
};

static const struct tracer tracers[] = {
	{ "untraced", NULL, { NULL } },
	{ "tps", "tps", { "-i", "3600", NULL } }, /* only the final report */
	{ "watch-xid-trap", "watch", { "xid", "-i", "0", NULL } },
	{ "watch-xid-poll", "watch", { "xid", "--mode", "poll", "-i", "0", NULL } },
};
#define NTRACERS (int)(sizeof(tracers) / sizeof(tracers[0]))

struct child {
	pid_t pid;
	int out; /* stdout + stderr */
	char buf[16384];
	size_t len;
};

static int spawn(struct child *c, char *const argv[], bool merge_stderr)
{
	int p[2];

	memset(c, 0, sizeof(*c));
	if (pipe2(p, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid < 0) {
		close(p[0]);
		close(p[1]);
		c->pid = 0;
		return -1;
	}
	if (c->pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		dup2(devnull, 0);
		dup2(p[1], 1);
		if (merge_stderr)
			dup2(p[1], 2);
		/* Its own process group: Ctrl-C reaches dbtap, which stops it. */
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "error: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	c->out = p[0];
	return 0;
}

/* Reads what is there, waiting up to ms; -1 at end of file. */
static int fill(struct child *c, int ms)
{
	struct pollfd pfd = { .fd = c->out, .events = POLLIN };

	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	if (c->len + 1 >= sizeof(c->buf))
		return -1;
	ssize_t n = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (n <= 0)
		return -1;
	c->len += n;
	c->buf[c->len] = 0;
	return 0;
}

static int reap(struct child *c)
{
	int status = 0;

	if (!c->pid)
		return -1;
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	c->pid = 0;
	close(c->out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void kill_child(struct child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap(c);
	}
}

/* The first "error: ..." line a child printed, for the "not available" reason. */
static void first_error(const struct child *c, char *reason, size_t rlen, const char *dflt)
{
	const char *e = strstr(c->buf, "error: ");
	if (e)
		snprintf(reason, rlen, "%.*s", (int)strcspn(e + 7, "\n"), e + 7);
	else
		snprintf(reason, rlen, "%s", dflt);
}

/*
 * Starts `dbtap CMD --pg=DATADIR ARGS` and waits for its "attached" line on stderr
 * (tps: "tracing ...", watch: "watching ..."/"polling ..."). 0; 1 when it could not
 * attach (reason set); -1 on Ctrl-C.
 */
static int tracer_start(struct child *c, const char *self, const struct tracer *t,
			const char *datadir, char *reason, size_t rlen)
{
	char pgopt[600];
	char *argv[12];
	int n = 0;

	snprintf(pgopt, sizeof(pgopt), "--pg=%s", datadir);
	argv[n++] = (char *)self;
	argv[n++] = (char *)t->cmd;
	for (int i = 0; i < 6 && t->args[i]; i++)
		argv[n++] = (char *)t->args[i];
	argv[n++] = pgopt;
	argv[n++] = "-j";
	argv[n] = NULL;
	if (spawn(c, argv, true)) {
		snprintf(reason, rlen, "cannot run dbtap %s: %s", t->cmd, strerror(errno));
		return 1;
	}
	for (int waited = 0; waited < 30000; waited += 50) {
		if (runloop_stopped()) {
			kill_child(c);
			return -1;
		}
		int eof = fill(c, 50);
		if (strstr(c->buf, "tracing ") || strstr(c->buf, "watching ") ||
		    strstr(c->buf, "polling "))
			return 0;
		if (eof)
			break;
	}
	first_error(c, reason, rlen, "it did not attach within 30 s");
	kill_child(c);
	return 1;
}

static void tracer_stop(struct child *c)
{
	if (!c->pid)
		return;
	kill(c->pid, SIGINT);
	for (int waited = 0; waited < 10000 && !fill(c, 100); waited += 100)
		;
	kill_child(c);
}

struct pgb_result {
	double tps;
	unsigned long long xacts;
};

/* Runs pgbench to the end; 0 with its figures, 1 with the reason, -1 on Ctrl-C. */
static int run_pgbench(const struct pgbench_opts *o, const struct pg_cluster *cl,
		       const char *script, struct pgb_result *r, char *reason, size_t rlen)
{
	char port[16], clients[16], threads[16], secs[32];
	const char *host = cl->pidfile.socket_dir[0] ? cl->pidfile.socket_dir : "localhost";
	const char *user = getenv("PGUSER");
	const char *db = getenv("PGDATABASE");
	struct child c;
	char *argv[24];
	int n = 0, rc;

	snprintf(port, sizeof(port), "%d", cl->pidfile.port);
	snprintf(clients, sizeof(clients), "%d", o->clients);
	snprintf(threads, sizeof(threads), "%d", o->clients < 2 ? o->clients : 2);
	snprintf(secs, sizeof(secs), "%d", (int)ceil(o->duration));
	argv[n++] = "pgbench";
	argv[n++] = "-n";
	argv[n++] = "-f";
	argv[n++] = (char *)script;
	argv[n++] = "-c";
	argv[n++] = clients;
	argv[n++] = "-j";
	argv[n++] = threads;
	argv[n++] = "-T";
	argv[n++] = secs;
	argv[n++] = "-h";
	argv[n++] = (char *)host;
	argv[n++] = "-p";
	argv[n++] = port;
	/* root has no role of its own in a stock cluster: default to the superuser. */
	argv[n++] = "-U";
	argv[n++] = (char *)(user && *user ? user : "postgres");
	argv[n++] = (char *)(db && *db ? db : "postgres");
	argv[n] = NULL;

	if (spawn(&c, argv, true)) {
		snprintf(reason, rlen, "cannot run pgbench: %s", strerror(errno));
		return 1;
	}
	while (!fill(&c, 200))
		if (runloop_stopped()) {
			kill_child(&c);
			return -1;
		}
	rc = reap(&c);
	const char *t = strstr(c.buf, "tps = ");
	const char *x = strstr(c.buf, "actually processed: ");
	if (rc || !t || !x) {
		const char *e = strstr(c.buf, "pgbench: error: ");
		if (e)
			snprintf(reason, rlen, "pgbench: %.*s", (int)strcspn(e + 16, "\n"), e + 16);
		else
			snprintf(reason, rlen, "pgbench failed (exit status %d)", rc);
		return 1;
	}
	r->tps = strtod(t + 6, NULL);
	r->xacts = strtoull(x + 20, NULL, 10);
	return 0;
}

struct pg_row {
	bool available;
	char reason[256];
	double tps[64];
	unsigned long long xacts;
	int n;
};

/*
 * The median over repeats of 1 - tps / untraced tps of the same repeat: the runs of
 * one repeat follow each other, so drift of the machine between repeats cancels.
 */
static double paired_loss(const struct pg_row *row, const struct pg_row *base)
{
	int n = row->n < base->n ? row->n : base->n;
	double v[64];

	if (n <= 0)
		return NAN;
	for (int i = 0; i < n; i++)
		v[i] = (1 - row->tps[i] / base->tps[i]) * 100;
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
			double t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int pgbench_compare(const struct pgbench_opts *o)
{
	struct pg_cluster cl;
	struct pg_row rows[NTRACERS];
	struct runloop rl;
	char dir[] = "/tmp/dbtap-bench-XXXXXX", script[64], *self;
	int rc = EXIT_OK;
	bool interrupted = false;
	FILE *f;

	if (o->repeats > 64) {
		error("bad repeat count '%d' for bench pgbench", o->repeats);
		hint("at most 64 pgbench runs per tracer");
		return EXIT_USAGE;
	}
	rc = pg_cluster_resolve(o->pg_set ? o->pg : NULL, &cl);
	if (rc)
		return rc;
	self = proc_exe(getpid());
	if (!self || !mkdtemp(dir)) {
		error_errno("cannot prepare the pgbench script");
		free(self);
		pg_cluster_free(&cl);
		return EXIT_FAIL;
	}
	snprintf(script, sizeof(script), "%s/xid.sql", dir);
	f = fopen(script, "w");
	if (!f || fputs(script_text, f) < 0 || fclose(f)) {
		error_errno("cannot write %s", script);
		rmdir(dir);
		free(self);
		pg_cluster_free(&cl);
		return EXIT_FAIL;
	}
	/* pgbench may run as another user: let it read the script. */
	chmod(dir, 0755);
	chmod(script, 0644);

	runloop_init(&rl, 0, 0);
	memset(rows, 0, sizeof(rows));
	for (int i = 0; i < NTRACERS; i++)
		rows[i].available = true;
	if (!global.json) {
		printf("dbtap bench pgbench: cluster %s (PostgreSQL %s, pid %d), %d clients, "
		       "%d x %.0f s each, script: %s",
		       cl.datadir, cl.version, (int)cl.postmaster, o->clients, o->repeats,
		       ceil(o->duration), script_text);
	}

	for (int rep = 0; rep < o->repeats && !interrupted && rc == EXIT_OK; rep++) {
		for (int i = 0; i < NTRACERS && !interrupted; i++) {
			struct pg_row *row = &rows[i];
			struct child tr = { 0 };
			struct pgb_result r;
			int ret;

			if (!row->available)
				continue;
			if (tracers[i].cmd) {
				ret = tracer_start(&tr, self, &tracers[i], cl.datadir, row->reason,
						   sizeof(row->reason));
				if (ret < 0) {
					interrupted = true;
					break;
				}
				if (ret) {
					row->available = false;
					continue;
				}
			}
			ret = run_pgbench(o, &cl, script, &r, row->reason, sizeof(row->reason));
			tracer_stop(&tr);
			if (ret < 0) {
				interrupted = true;
			} else if (ret) {
				/* pgbench itself failed: nothing else can be measured either. */
				error("%s", row->reason);
				hint("check that pgbench can connect: PGUSER and PGDATABASE choose the role"
				     " and the database (default postgres)");
				rc = EXIT_FAIL;
				break;
			} else {
				row->tps[row->n++] = r.tps;
				row->xacts += r.xacts;
			}
		}
	}

	if (!global.json && rc == EXIT_OK)
		printf("%-16s %10s %8s %8s  %s\n", "tracer", "tps", "loss", "spread", "transactions");
	for (int i = 0; i < NTRACERS && rc == EXIT_OK; i++) {
		struct pg_row *row = &rows[i];
		double med = NAN, spread = NAN;
		if (row->n > 0) {
			double v[64];
			memcpy(v, row->tps, sizeof(double) * row->n);
			/* insertion sort: a handful of values */
			for (int a = 1; a < row->n; a++)
				for (int b = a; b > 0 && v[b] < v[b - 1]; b--) {
					double t = v[b];
					v[b] = v[b - 1];
					v[b - 1] = t;
				}
			med = row->n % 2 ? v[row->n / 2] : (v[row->n / 2 - 1] + v[row->n / 2]) / 2;
			spread = (v[row->n - 1] - v[0]) / med * 100;
		}
		if (row->available && row->n == 0)
			continue;
		if (global.json) {
			struct json j;
			json_init(&j);
			json_report_begin(&j, "row", runloop_total(&rl));
			json_str(&j, "tracer", tracers[i].name);
			json_bool(&j, "available", row->available);
			if (!row->available) {
				json_str(&j, "reason", row->reason);
			} else {
				json_int(&j, "samples", row->n);
				json_double(&j, "tps", med);
				json_double(&j, "spread_pct", spread);
				json_uint(&j, "transactions", row->xacts);
				if (i)
					json_double(&j, "loss_pct", paired_loss(row, &rows[0]));
				else
					json_null(&j, "loss_pct");
			}
			json_object_end(&j);
			json_flush_line(&j, stdout);
			json_release(&j);
		} else if (!row->available) {
			printf("%-16s not available: %s\n", tracers[i].name, row->reason);
		} else {
			char loss[32] = "-";
			if (i)
				snprintf(loss, sizeof(loss), "%.1f%%", paired_loss(row, &rows[0]));
			printf("%-16s %10.1f %8s %7.1f%%  %llu\n", tracers[i].name, med, loss, spread,
			       row->xacts);
		}
	}
	if (interrupted && !global.json)
		printf("interrupted: the figures cover the runs that finished\n");
	if (global.json && rc == EXIT_OK) {
		struct json j;
		double t = runloop_total(&rl);
		json_init(&j);
		json_report_begin(&j, "summary", t);
		json_double(&j, "duration_s", round(t * 1e6) / 1e6);
		json_str(&j, "end", interrupted ? "interrupted" : "duration");
		json_int(&j, "clients", o->clients);
		json_int(&j, "repeats", o->repeats);
		json_object_end(&j);
		json_flush_line(&j, stdout);
		json_release(&j);
	}

	unlink(script);
	rmdir(dir);
	free(self);
	pg_cluster_free(&cl);
	return rc;
}
