/*
 * write.h: the serializer, from a program image (vm/program.h) whose
 * subjects' databases are built to the bytes of a rules file
 * (vm/format.h, docs/format.md).
 */
#ifndef LANG_WRITE_H
#define LANG_WRITE_H

#include "program.h"

/* Serializes `prog` into a new malloc'd buffer (*out, *outlen bytes; the
 * caller frees it). Returns CLF_OK, CLF_E_NOMEM or CLF_E_BACKEND (a
 * database would not serialize), with a message in err. */
clf_status cc_write(const clf_program *prog, uint8_t **out, size_t *outlen, char *err,
                    size_t errlen);

#endif
