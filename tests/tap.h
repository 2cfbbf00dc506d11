/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a tiny Test Anything Protocol helper for the unit tests
 *
 * ok(cond, fmt, ...) prints "ok N - text" or "not ok N - text" (with the
 * file and line on failure); done_testing() prints the plan and returns the
 * exit status. Registered in meson with protocol: 'tap'.
 */
#ifndef IOTAP_TAP_H
#define IOTAP_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...) (printf("# " __VA_ARGS__), printf("\n"))

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* IOTAP_TAP_H */
