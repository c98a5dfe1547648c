/*
 * md5.c - MD5 message digest, written from the description in RFC 1321.
 */
#include "md5.h"

#include <string.h>

/* Per-round shift amounts (RFC 1321 section 3.4). */
static const unsigned char slt_md5_shift[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,	 14, 20, 5, 9,	14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
};

/* T[i] = floor(2^32 * abs(sin(i + 1))), the RFC's table. */
static const uint32_t slt_md5_t[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

static uint32_t slt_md5_rotl(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

/* One 64-byte block; the message words are little-endian by definition. */
static void slt_md5_block(struct slt_md5 *m, const unsigned char *p)
{
	uint32_t w[16], a, b, c, d, f, tmp;
	unsigned i, g;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		       (uint32_t)p[4 * i + 2] << 16 |
		       (uint32_t)p[4 * i + 3] << 24;
	a = m->state[0];
	b = m->state[1];
	c = m->state[2];
	d = m->state[3];
	for (i = 0; i < 64; i++) {
		if (i < 16) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (i < 32) {
			f = (b & d) | (c & ~d);
			g = (5 * i + 1) & 15;
		} else if (i < 48) {
			f = b ^ c ^ d;
			g = (3 * i + 5) & 15;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) & 15;
		}
		tmp = d;
		d = c;
		c = b;
		b = b +
		    slt_md5_rotl(a + f + slt_md5_t[i] + w[g], slt_md5_shift[i]);
		a = tmp;
	}
	m->state[0] += a;
	m->state[1] += b;
	m->state[2] += c;
	m->state[3] += d;
}

void slt_md5_init(struct slt_md5 *m)
{
	m->state[0] = 0x67452301;
	m->state[1] = 0xefcdab89;
	m->state[2] = 0x98badcfe;
	m->state[3] = 0x10325476;
	m->nbytes = 0;
}

void slt_md5_update(struct slt_md5 *m, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t have = m->nbytes & 63;

	m->nbytes += len;
	if (have) {
		size_t take = 64 - have < len ? 64 - have : len;

		memcpy(m->buf + have, p, take);
		p += take;
		len -= take;
		if (have + take < 64)
			return;
		slt_md5_block(m, m->buf);
	}
	for (; len >= 64; p += 64, len -= 64)
		slt_md5_block(m, p);
	memcpy(m->buf, p, len);
}

void slt_md5_final_hex(struct slt_md5 *m, char hex[33])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char pad[72] = {0x80};
	uint64_t bits = m->nbytes * 8;
	size_t have = m->nbytes & 63;
	size_t npad = (have < 56 ? 56 : 120) - have;
	unsigned i;

	/* Padding: 0x80, zeros up to 56 mod 64, then the bit length (LE). */
	for (i = 0; i < 8; i++)
		pad[npad + i] = (unsigned char)(bits >> (8 * i));
	slt_md5_update(m, pad, npad + 8);
	for (i = 0; i < 16; i++) {
		unsigned char byte =
		    (unsigned char)(m->state[i / 4] >> (8 * (i % 4)));

		hex[2 * i] = digits[byte >> 4];
		hex[2 * i + 1] = digits[byte & 15];
	}
	hex[32] = 0;
}
