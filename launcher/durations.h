/* durations.h - durations as the launcher's options take them ("30s", "500ms", "2m"). */
#ifndef PI_LAUNCHER_DURATIONS_H
#define PI_LAUNCHER_DURATIONS_H

/* pi_parse_ms - "30s", "500ms", "2m", "1.5s" (a bare number: seconds) in milliseconds; -1 when
 * malformed */
long pi_parse_ms(const char *text);

#endif
