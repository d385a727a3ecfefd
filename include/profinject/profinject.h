/*
 * profinject.h - the control API of libprofinject.so.
 *
 * Applications need not link against the library: declare these weak and
 * check for NULL, or use the PROFINJECT_MARK macro, and the program works
 * with or without LD_PRELOAD=libprofinject.so.
 */
#ifndef PROFINJECT_H
#define PROFINJECT_H

#include <stdint.h>

/* Weak for callers, so the symbols are NULL when the library is absent. */
#ifdef PROFINJECT_BUILDING_LIBRARY
#define PROFINJECT_WEAK
#else
#define PROFINJECT_WEAK __attribute__((weak))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * profinject_mark - record an instant event
 * @name: label shown in reports (interned), or NULL
 * @value: any number the application wants to see beside it
 */
void profinject_mark(const char *name, uint64_t value) PROFINJECT_WEAK;

/* profinject_now - current time in trace clock ticks, for profinject_range */
uint64_t profinject_now(void) PROFINJECT_WEAK;

/**
 * profinject_range - record a span that started at @start (from profinject_now) and ends now
 * @name: label (interned), or NULL
 * @start: profinject_now() at the start of the span
 * @value: any number
 */
void profinject_range(const char *name, uint64_t start, uint64_t value) PROFINJECT_WEAK;

/**
 * profinject_flush - write everything recorded so far to the trace file
 * @timeout_ms: longest wait
 * Return: 0 when written, -1 on timeout or when not recording.
 */
int profinject_flush(unsigned timeout_ms) PROFINJECT_WEAK;

/* profinject_is_recording - nonzero while this process is being traced */
int profinject_is_recording(void) PROFINJECT_WEAK;

#define PROFINJECT_MARK(name, value)                                                              \
    do {                                                                                          \
        if (profinject_mark)                                                                      \
            profinject_mark((name), (value));                                                     \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
