/*
 * control_commands.h - the launcher's commands that speak to running
 * processes through their control sockets (control.h): ctl (capture
 * windows, status, detach) and stacks (every Python thread's stack now).
 */
#ifndef PI_LAUNCHER_CONTROL_COMMANDS_H
#define PI_LAUNCHER_CONTROL_COMMANDS_H

/* pi_cmd_ctl - profinject ctl [--timeout TIME] PID start|stop|status|detach|capture TIME */
int pi_cmd_ctl(int argc, char **argv);

/* pi_cmd_stacks - profinject stacks [--timeout TIME] [--all] PID */
int pi_cmd_stacks(int argc, char **argv);

#endif
