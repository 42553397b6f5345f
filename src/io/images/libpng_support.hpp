// What every libpng caller of src/io/images shares (the encoder, the palette
// writer, the decoder): libpng reports errors by longjmp, so the error handler
// copies the message into the caller's context and jumps, warnings are
// dropped, and a writer's sink failure is kept as an exception_ptr in the
// context and turned into a libpng error (an exception must not unwind
// through libpng's C frames). The functions that call libpng must hold no C++
// objects with destructors.
#pragma once

#include <png.h>

#include <cstdio>
#include <exception>

#include "io/output_file.hpp"

namespace procgen::io {

/// The context of one libpng write: where bytes go, a sink failure, libpng's message.
struct PngWriteContext {
  OutputStream* out = nullptr;
  std::exception_ptr sink_error;
  char message[256] = "libpng error";
};

/// png_create_*_struct's error function for a context with `char message[256]`
/// passed as the error pointer.
template <typename Context>
void pngErrorToContext(png_structp png, png_const_charp message) {
  auto* context = static_cast<Context*>(png_get_error_ptr(png));
  std::snprintf(context->message, sizeof context->message, "%s", message);
  png_longjmp(png, 1);
}

inline void pngIgnoreWarning(png_structp, png_const_charp) {}

/// png_set_write_fn's write function for a PngWriteContext io pointer.
inline void pngWriteToContext(png_structp png, png_bytep data, png_size_t size) {
  auto* context = static_cast<PngWriteContext*>(png_get_io_ptr(png));
  try {
    context->out->write(data, size);
    return;
  } catch (...) {
    context->sink_error = std::current_exception();
  }
  png_error(png, "output failed");
}

inline void pngNoFlush(png_structp) {}

}  // namespace procgen::io
