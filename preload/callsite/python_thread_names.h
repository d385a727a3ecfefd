/*
 * python_thread_names.h - the names Python gives its threads
 * (threading.Thread.name): the kernel never hears of them (Python before
 * 3.14 does not set the thread's comm), so a report would otherwise show
 * every thread of a Python process as nameless.
 */
#ifndef PI_PYTHON_THREAD_NAMES_H
#define PI_PYTHON_THREAD_NAMES_H

#include "python_runtime.h"

/**
 * pi_python_thread_names - record the name of each thread that threading
 * knows and that is new or renamed since the last call, as a
 * PI_REC_THREAD_NAME naming its tid. In the main thread, holding the GIL
 * (a pending call); looks at most every 100 ms, and only when the program
 * imported threading itself. Raises nothing.
 */
void pi_python_thread_names(const struct pi_python *py);

#endif
