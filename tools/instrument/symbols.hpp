// Names of functions from the loaded objects' ELF symbol tables (.symtab, else .dynsym), for the
// build route's hooks (hooks.cpp). Internal to nvtxpp::instrument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nvtxpp::instrument {

/// Where an address lies: the function's display name and the object that holds it.
struct symbol_info {
  std::string name;    ///< display_name() of the demangled symbol; "0x..." when none is found
  std::string module;  ///< file name (no directory) of the object, "" when none holds it
};

/// The function symbol whose code holds @p addr, searched in the symbol tables of every object
/// loaded now (the executable and shared objects, listed with dl_iterate_phdr; objects loaded
/// later are read on the first miss). Not thread-safe: the caller serialises (slow path).
symbol_info lookup_symbol(std::uintptr_t addr);

/// Drops every table read so far (after a fork the objects are the same, so this is not needed
/// there; used by tests).
void reset_symbols();

/// A demangled C++ name without return type and parameter list, template arguments and
/// enclosing scopes kept: "int ns::twice<int>(int)" -> "ns::twice<int>",
/// "ns::widget::measure() const" -> "ns::widget::measure". A name that is not a function
/// signature comes back as it is.
std::string display_name(std::string const& demangled);

/// __cxa_demangle of @p mangled, then display_name(); a C name (or one that does not demangle)
/// comes back unchanged.
std::string function_name(char const* mangled);

}  // namespace nvtxpp::instrument
