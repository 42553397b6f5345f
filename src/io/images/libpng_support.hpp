// What every libpng caller of src/io/images shares (the encoder, the palette
// writer, the decoder): libpng reports errors by longjmp, so the error handler
// copies the message into the caller's context and jumps, warnings are
// dropped, and a writer's sink failure is kept as an exception_ptr in the
// context and turned into a libpng error (an exception must not unwind
// through libpng's C frames). The functions that call libpng must hold no C++
// objects with destructors.
#pragma once

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <exception>
#include <string>

#include "io/output_file.hpp"
#include "procgen/error.hpp"

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

/// The IHDR of a write, and the compression level.
struct PngHeader {
  int width = 0, height = 0, bit_depth = 8, color_type = PNG_COLOR_TYPE_RGB, compression_level = 6;
};

/// Writes the rest of a PNG after the IHDR: extra chunks, png_write_info,
/// the rows, png_write_end. libpng longjmps out of it on an error, so it
/// must hold no C++ objects with destructors.
using PngWriteBody = void (*)(png_structp png, png_infop info, const void* arg);

/// One libpng write into `context` under setjmp: the write struct, bytes
/// through the context, rows of any width (libpng's default caps them at 10^6
/// pixels), `header`, then `body`. False after a libpng error. No destructors
/// here either.
inline bool pngRunWrite(PngWriteContext& context, const PngHeader& header, PngWriteBody body, const void* arg) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, pngErrorToContext<PngWriteContext>,
                                            pngIgnoreWarning);
  if (!png) return false;
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, info ? &info : nullptr);
    return false;
  }
  png_set_write_fn(png, &context, pngWriteToContext, pngNoFlush);
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_set_compression_level(png, header.compression_level);
  png_set_IHDR(png, info, static_cast<png_uint_32>(header.width), static_cast<png_uint_32>(header.height),
               header.bit_depth, header.color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  body(png, info, arg);
  png_destroy_write_struct(&png, &info);
  return true;
}

/// A whole PNG into `sink` (pngRunWrite); a libpng error becomes the sink's
/// own exception or an OutputError naming the sink with libpng's message.
inline void pngWrite(ByteSink& sink, const PngHeader& header, PngWriteBody body, const void* arg) {
  OutputStream out(sink);
  PngWriteContext context;
  context.out = &out;
  if (!pngRunWrite(context, header, body, arg)) {
    if (context.sink_error) std::rethrow_exception(context.sink_error);
    throw OutputError("cannot write '" + sink.name() + "': " + context.message);
  }
  out.close();
}

}  // namespace procgen::io
