// Internal: how the built-in backends get into the device registry.
//
// The library may be a static archive, where a backend file that nothing references is dropped by the
// linker and its static registrar never runs. So the registry calls register_builtin_backends()
// explicitly on first use, and that calls one function per backend file.
#pragma once
#include <memory>
#include <string>

#include "runtime/device.h"

namespace tg {

void register_builtin_backends();  // device.cpp; runs once, before the registry is first read
void register_cpu_backend();       // ops_cpu.cpp
void register_ext_backend();       // ops_ext.cpp

// For the functions above: adds a backend unless one with this prefix is already registered (a user's
// Device::register_backend made before first use wins over a built-in).
void add_builtin_backend(const std::string& prefix, Device::Factory f);

// 64-byte aligned host memory (ops_ext.cpp); CPU uses it too, since it computes in host memory.
// `device` names the device in error messages.
std::unique_ptr<Allocator> make_host_allocator(const std::string& device);

}  // namespace tg
