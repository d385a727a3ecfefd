/*
 * array_room.h - room for one more item in a growable array: the analyses
 * keep their steps, threads, receipts and functions in arrays that double.
 */
#ifndef PI_ARRAY_ROOM_H
#define PI_ARRAY_ROOM_H

#include <stddef.h>
#include <stdlib.h>

/**
 * pi_array_room - make @array (of @count items of @size bytes, room for
 * *@capacity) hold one more, doubling it, or making room for @first at first
 * Return: 0, or -1 when out of memory (the array is left as it was).
 */
static inline int pi_array_room(void *array, size_t *capacity, size_t count, size_t size,
                                size_t first)
{
    void **items = array;
    if (count < *capacity)
        return 0;
    size_t wanted = *capacity ? *capacity * 2 : first;
    void *grown = realloc(*items, wanted * size);
    if (!grown)
        return -1;
    *items = grown;
    *capacity = wanted;
    return 0;
}

#endif
