/*
 * loaded_symbols.h - functions of the libraries the application loaded,
 * wherever it loaded them: a library opened with RTLD_LOCAL is in no
 * global scope, so dlsym(RTLD_NEXT) alone would not see it.
 */
#ifndef PI_LOADED_SYMBOLS_H
#define PI_LOADED_SYMBOLS_H

/**
 * pi_loaded_symbol - the real definition of @name in an object other than
 * this one: the global scope after us first (RTLD_NEXT), then every loaded
 * object.
 * Return: the function, or NULL.
 */
void *pi_loaded_symbol(const char *name);

/* pi_in_self - nonzero when @address lies inside libprofinject.so */
int pi_in_self(const void *address);

#endif
