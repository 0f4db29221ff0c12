/* usage_error.c: see usage_error.h. */
#include <stdarg.h>
#include <stdio.h>

#include "usage_error.h"

void cli_usage_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", prog);
    va_end(ap);
}
