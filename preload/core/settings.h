/*
 * settings.h - every PROFINJECT_* environment variable the library reads, in
 * one table (settings.c): its kind, its range or choices, its default. The
 * parts read their values through it, so a value out of range or not among
 * the choices is told on stderr (and the default used) the same way for all,
 * and a PROFINJECT_* name that is not in the table (a typo) is told too.
 */
#ifndef PI_SETTINGS_H
#define PI_SETTINGS_H

#include <stdint.h>

/**
 * pi_setting_number - the value of numeric setting @name, or its default when
 * unset, malformed or out of range (said once on stderr)
 */
uint64_t pi_setting_number(const char *name);

/**
 * pi_setting_choice - the value of setting @name when it is one of its
 * choices, else its default (said on stderr when set to something else)
 */
const char *pi_setting_choice(const char *name);

/* pi_setting_flag - a 0/1 setting: nonzero when set to 1 (anything else but 0 and unset is told) */
int pi_setting_flag(const char *name);

/**
 * pi_settings_check_environment - tell, on stderr, each PROFINJECT_* variable
 * of the environment that no part reads, and each value not allowed (what is
 * wrong is told once per process image, and only in the first process of a
 * traced tree, whose parent does not run the library: a chain of shims and
 * workers says it once)
 */
void pi_settings_check_environment(void);

/* pi_settings_tell - say what is wrong with a setting a part reads itself, as
 * pi_settings_check_environment does: only in the first process of a traced tree */
void pi_settings_tell(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
