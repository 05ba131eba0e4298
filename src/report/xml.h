/* Untrusted text written into the SVG files: markup characters as entities, control bytes as spaces. */
#ifndef DBTAP_REPORT_XML_H
#define DBTAP_REPORT_XML_H

#include <stdio.h>

/*
 * Writes s to f as XML character data or an attribute value (double or single quoted):
 * & < > " ' as entities, and a byte below 0x20 as a space (XML 1.0 allows none of
 * them but tab, newline and return, and an attribute turns those into spaces anyway).
 * Names and texts come from the traced processes: titles, symbols, statements.
 */
void xml_escape(FILE *f, const char *s);

#endif
