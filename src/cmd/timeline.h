/* What dbtap profile --timeline and dbtap record share: the output files of a timeline and its JSON rows. */
#ifndef DBTAP_CMD_TIMELINE_H
#define DBTAP_CMD_TIMELINE_H

#include "report/timeline.h"
#include "util/json.h"

enum tl_output { TL_OUT_NONE, TL_OUT_SVG, TL_OUT_GECKO_GZ, TL_OUT_GECKO };

/* What a file name asks for, by its suffix: .svg, .json.gz, .json. */
enum tl_output tl_output_kind(const char *path);
/* Writes m to path (beside it first, then renamed); 0, or -1 with the error printed. */
int tl_write_file(const struct tl_model *m, const char *path, int top, double start_realtime_s);
/* The "threads" array of a timeline JSON report: cells of samples and spans per row. */
void tl_json_rows(struct json *j, const struct tl_model *m, int top, int ncells);

#endif
