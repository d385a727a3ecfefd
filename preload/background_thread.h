/*
 * background_thread.h - the profiler's own threads (writer, GPU timing,
 * control listener): detached, and started with every signal blocked so
 * that none of the application's signals is ever delivered to them.
 */
#ifndef PI_BACKGROUND_THREAD_H
#define PI_BACKGROUND_THREAD_H

/* pi_background_thread - start @routine(@arg); 0, or an error number */
int pi_background_thread(void *(*routine)(void *), void *arg);

#endif
