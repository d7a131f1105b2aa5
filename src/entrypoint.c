// Registers the Rust routines with R. The reference to the Rust init function
// also keeps the linker from dropping the static library.
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

void R_init_mcpserver_extendr(DllInfo *dll);
void register_extendr_panic_hook(void);

void R_init_mcpserver(DllInfo *dll) {
  register_extendr_panic_hook();
  R_init_mcpserver_extendr(dll);
}
