/* PostgreSQL clusters running here, found from /proc and DATADIR/postmaster.pid. */
#ifndef DBTAP_PG_CLUSTER_H
#define DBTAP_PG_CLUSTER_H

#include <stdbool.h>
#include <sys/types.h>

/* DATADIR/postmaster.pid, parsed. */
struct pg_pidfile {
	pid_t pid;
	char datadir[512];
	long start_time;
	int port;
	char socket_dir[512];
	char listen_addr[256];
	char shmem_key[64];
	char status[32]; /* starting, stopping, ready, standby ("" on old versions) */
};

struct pg_proc {
	pid_t pid;
	char type[64];  /* pg_stat_activity.backend_type names, plus "postmaster" */
	char *title;    /* the full process title */
	char user[64];  /* client backends and walsenders: from the title */
	char database[64];
	char host[128];     /* client backends and walsenders: "[local]" or HOST(PORT) */
	char activity[128]; /* client backends: "idle", "SELECT", ...; others: the rest */
};

/* Everything a process title says. */
struct pg_title {
	char type[64];
	char cluster_name[64]; /* "" when the cluster sets none */
	char user[64];
	char database[64];
	char host[128];
	char activity[128];
};

struct pg_cluster {
	pid_t postmaster;
	char *binary;      /* /proc/PID/exe of the postmaster */
	char *datadir;
	int major;         /* 15 */
	char version[32];  /* "15.18" (from PG_VERSION and the binary) */
	struct pg_pidfile pidfile;
	bool have_pidfile;
	char cluster_name[64]; /* from its children's titles; "" when none is set */
	struct pg_proc *procs; /* the postmaster first, then its children by pid */
	int nprocs;
};

struct pg_cluster_list {
	struct pg_cluster *c;
	int n;
	int hidden; /* PostgreSQL processes that could not be inspected (permissions) */
};

/* Parses postmaster.pid text; 0 or -1 (not a postmaster.pid). Unit-tested. */
int pg_pidfile_parse(const char *text, struct pg_pidfile *pf);
/*
 * Backend type from a process title (with or without cluster_name), into type;
 * user/database filled for client backends; 0, or -1 when the title is not a
 * PostgreSQL child's. Unit-tested with every type.
 */
int pg_title_parse(const char *title, char *type, size_t tlen, char *user, size_t ulen,
		   char *db, size_t dlen);

/* The same, with every part of the title. */
int pg_title_parse_full(const char *title, struct pg_title *out);

/* Every cluster running here (postmasters: processes whose exe is a PostgreSQL server
 * binary and whose parent is not one). 0 or -1. */
int pg_cluster_discover(struct pg_cluster_list *list);
void pg_cluster_list_free(struct pg_cluster_list *list);
/* Refreshes c->procs from /proc (children of the postmaster). */
int pg_cluster_refresh_procs(struct pg_cluster *c);

/*
 * Resolves --pg TARGET: a data directory, a port, a postmaster pid, or NULL/"" for
 * "the only one". On success fills *out (caller frees with pg_cluster_free) and
 * returns 0; otherwise prints an error with a hint (listing the choices when more than
 * one cluster runs) and returns EXIT_USAGE or EXIT_FAIL.
 */
int pg_cluster_resolve(const char *spec, struct pg_cluster *out);
/*
 * The running cluster a data directory or a postmaster pid names, read from its
 * postmaster.pid and that one process's children, without a scan of every process;
 * 0, or -1 and no message when spec names none (a port needs the scan).
 */
int pg_cluster_lookup(const char *spec, struct pg_cluster *out);
void pg_cluster_free(struct pg_cluster *c);
/* Whether pid is the postmaster of a cluster running here. */
bool pg_is_postmaster(pid_t pid);
/* Type of one pid of the cluster ("client backend", ...), "" when it is not one of it. */
const char *pg_cluster_proc_type(struct pg_cluster *c, pid_t pid);

#endif
