/* namespaces.h - whether another process shares our namespaces, and sockets
 * made in its network namespace (abstract unix sockets live there). */
#ifndef PI_LAUNCHER_NAMESPACES_H
#define PI_LAUNCHER_NAMESPACES_H

#include <sys/types.h>

/* pi_same_namespace - whether @pid is in our namespace of @kind ("mnt", "pid", "net") */
int pi_same_namespace(pid_t pid, const char *kind);

/**
 * pi_socket_in_network_of - a unix stream socket (close-on-exec) made in the
 * network namespace of @pid, which this thread enters and leaves for it
 * (CAP_SYS_ADMIN) when it is not ours.
 * Return: the socket, or -1 with errno set.
 */
int pi_socket_in_network_of(pid_t pid);

#endif
