/*
 * md5.h - MD5 message digest (RFC 1321) for the sqllogictest runner.
 *
 * sqllogictest compares large results by the MD5 of their printed values,
 * so the runner needs MD5 and nothing stronger; a small implementation
 * keeps the runner free of a crypto library dependency.
 */
#ifndef SLT_MD5_H
#define SLT_MD5_H

#include <stddef.h>
#include <stdint.h>

struct slt_md5 {
	uint32_t state[4];
	uint64_t nbytes; /* message length so far, in bytes */
	unsigned char buf[64];
};

void slt_md5_init(struct slt_md5 *m);
void slt_md5_update(struct slt_md5 *m, const void *data, size_t len);
/* Writes the digest as 32 lowercase hex digits and a NUL into hex. */
void slt_md5_final_hex(struct slt_md5 *m, char hex[33]);

#endif /* SLT_MD5_H */
