/* Reading back dbtap's own NDJSON reports (for comparing with a saved run). */
#ifndef DBTAP_REPORT_JSONREAD_H
#define DBTAP_REPORT_JSONREAD_H

#include <stdbool.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

/* A parsed JSON value; objects keep their keys in order. */
struct jv {
	enum jv_type type;
	bool b;
	double num;
	char *str;
	int n;             /* items of an array or object */
	struct jv *items;
	char **keys;       /* objects only */
};

/*
 * Parses one JSON text (a whole line of NDJSON). NULL on malformed input, with *err
 * (when not NULL) pointing at a static description.
 */
struct jv *jv_parse(const char *text, const char **err);
void jv_free(struct jv *v);
/* Member of an object, NULL when v is not an object or has no such key. */
const struct jv *jv_get(const struct jv *v, const char *key);
/* The value as a number / string / bool, or dflt when it is not one (null included). */
double jv_num(const struct jv *v, double dflt);
const char *jv_str(const struct jv *v, const char *dflt);
bool jv_bool(const struct jv *v, bool dflt);

#endif
