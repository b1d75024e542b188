/* fork() while other threads run hipdnn (data loaders, multiprocessing): the child must
 * find every backend lock free and no plugin call half done.  prepare takes the locks in
 * one fixed order (the registry, the heuristic plugins' loader, each live handle in list order, the logger), so it waits
 * for a plugin load or a plugin call in flight to finish; parent releases them; child
 * makes them anew, since its one thread is not their owner.  The order is safe because no
 * code holds a handle's lock while taking the registry's or another handle's, and the
 * logger's lock is never held while taking another. */
#include <pthread.h>

#include "device.h"
#include "handle.h"
#include "heuristic_plugins.h"
#include "log.h"
#include "registry.h"

static void prepare(void) {
    hipdnnRegistryForkPrepare();
    hipdnnHeuristicForkPrepare();
    hipdnnHandlesForkPrepare();
    hipdnnLogForkPrepare();
}

static void parent(void) {
    hipdnnLogForkParent();
    hipdnnHandlesForkParent();
    hipdnnHeuristicForkParent();
    hipdnnRegistryForkParent();
}

static void child(void) {
    hipdnnPointerCacheDrop(); /* the parent's device memory is not the child's */
    hipdnnLogForkChild();
    hipdnnHandlesForkChild();
    hipdnnHeuristicForkChild();
    hipdnnRegistryForkChild();
}

/* When the library loads, before any lock can be taken.  glibc drops the handlers if the
 * library is unloaded.  Registration fails only without memory, and then fork is as
 * unsafe as it was before; there is no caller to tell. */
__attribute__((constructor)) static void register_fork_handlers(void) {
    (void)pthread_atfork(prepare, parent, child);
}
