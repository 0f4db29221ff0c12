/*
 * visibility.h: VM_INTERNAL marks functions shared between the VM's
 * files but hidden from libclassify's users (the shared library exports
 * only CLF_API symbols).
 */
#ifndef VM_VISIBILITY_H
#define VM_VISIBILITY_H

#ifdef __GNUC__
#define VM_INTERNAL __attribute__((visibility("hidden")))
#else
#define VM_INTERNAL
#endif

#endif
