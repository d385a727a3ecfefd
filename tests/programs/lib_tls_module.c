/*
 * lib_tls_module - a library with thread-local storage of its own, nothing
 * else. Each copy of it loaded by a new path is a new module: every load
 * moves the C library's generation of such storage, and past a few, every
 * thread's table of it must grow (with malloc) at its next touch of any
 * dynamic thread-local variable (prog_tls_loads).
 */
static __thread int counter;

int pi_tls_module_touch(void)
{
    return ++counter;
}
