/*
 * usage_error.h: the one way the command-line tools (classify-run,
 * classify-serve) report a bad command line: "PROG: error: MESSAGE" and
 * a pointer to --help, on stderr. The caller exits with status 2.
 */
#ifndef CLI_USAGE_ERROR_H
#define CLI_USAGE_ERROR_H

void cli_usage_error(const char *prog, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
