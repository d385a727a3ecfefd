/*
 * loader_lock.c - the loader's list lock, found in its state and read
 * without being taken (see loader_lock.h).
 *
 * glibc keeps the lock, GL(dl_load_write_lock), in _rtld_global, at an offset
 * that changes between its versions; its type is a pthread_mutex_t, whose
 * first fields (the lock word, the recursion count, the owner's thread id)
 * have kept their places on every architecture glibc supports. The search
 * runs inside dl_iterate_phdr called inside dl_iterate_phdr, where that
 * lock, and no other of the loader's, is held by this thread twice.
 */
#include "loader_lock.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/raw_syscalls.h"
#include "core/real_functions.h"

/* the leading fields of glibc's struct __pthread_mutex_s */
struct mutex_head {
    int lock;
    unsigned int count;
    int owner;
};

static const volatile int *lock_word;

struct search {
    const unsigned char *state;
    size_t size;
    int tid, depth;
    const struct mutex_head *found;
    int matches;
};

static int look(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    struct search *s = data;
    if (s->depth++ == 0) {
        dl_iterate_phdr(look, s); /* held twice from here */
        return 1;
    }
    for (size_t at = 0; at + sizeof(struct mutex_head) <= s->size; at += sizeof(int)) {
        const struct mutex_head *m = (const struct mutex_head *)(s->state + at);
        if (m->lock != 0 && m->count == 2 && m->owner == s->tid) {
            s->found = m;
            s->matches++;
        }
    }
    return 1;
}

int pi_loader_lock_find(void)
{
    if (lock_word)
        return 1;
    void *state = pi_dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *symbol = NULL;
    if (!state || !dladdr1(state, &info, (void **)&symbol, RTLD_DL_SYMENT) || !symbol ||
        symbol->st_size < sizeof(struct mutex_head))
        return 0;
    struct search s = {state, symbol->st_size, (int)pi_sys_gettid(), 0, NULL, 0};
    dl_iterate_phdr(look, &s);
    /* released again (this thread no longer owns it): the one match is the lock */
    if (s.matches != 1 || s.found->owner == s.tid)
        return 0;
    lock_word = &s.found->lock;
    return 1;
}

int pi_loader_lock_taken(void)
{
    return !lock_word || atomic_load_explicit((const _Atomic int *)lock_word,
                                              memory_order_acquire) != 0;
}
