/* top.h - profinject top: a running job's live figures (top.c). */
#ifndef PI_LAUNCHER_TOP_H
#define PI_LAUNCHER_TOP_H

/* pi_cmd_top - profinject top [--once] [--json] [--interval TIME] PID */
int pi_cmd_top(int argc, char **argv);

#endif
