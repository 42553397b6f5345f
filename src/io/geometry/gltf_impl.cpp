// The single translation unit compiling the header-only tinygltf (Debian's
// libtinygltf-dev) and the stb image code it includes.
#define TINYGLTF_IMPLEMENTATION
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <tiny_gltf.h>
