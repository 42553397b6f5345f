// A PLY reader for the tests, written from the PLY description independently
// of the writers: header declarations drive a binary little-endian or ASCII
// body parse (lists flattened). Used by the mesh and point-set PLY tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace procgen::iotest {

struct Property {
  std::string type, name, count_type;  // count_type non-empty for lists
};
struct Element {
  std::string name;
  size_t count = 0;
  std::vector<Property> properties;
};
struct PlyFile {
  std::string format;
  std::vector<Element> elements;
  // Values as double, per element, per record, per property (lists flattened).
  std::map<std::string, std::vector<std::vector<double>>> data;
};

inline size_t typeSize(const std::string& t) {
  if (t == "char" || t == "uchar" || t == "int8" || t == "uint8") return 1;
  if (t == "short" || t == "ushort") return 2;
  if (t == "int" || t == "uint" || t == "float" || t == "int32" || t == "float32") return 4;
  if (t == "double") return 8;
  ADD_FAILURE() << "unknown PLY type " << t;
  return 4;
}

inline double readBinary(const std::string& t, const char*& p) {
  double v = 0;
  if (t == "uchar" || t == "uint8") {
    v = static_cast<unsigned char>(*p);
  } else if (t == "char") {
    v = static_cast<signed char>(*p);
  } else if (t == "int" || t == "int32") {
    int32_t i;
    std::memcpy(&i, p, 4);
    v = i;
  } else if (t == "uint") {
    uint32_t i;
    std::memcpy(&i, p, 4);
    v = i;
  } else if (t == "float" || t == "float32") {
    float f;
    std::memcpy(&f, p, 4);
    v = f;
  }
  p += typeSize(t);
  return v;
}

inline PlyFile parsePly(const std::string& bytes) {
  PlyFile ply;
  size_t end = bytes.find("end_header\n");
  EXPECT_NE(end, std::string::npos);
  EXPECT_EQ(bytes.rfind("ply\n", 0), 0u);
  std::istringstream header(bytes.substr(0, end));
  std::string line;
  while (std::getline(header, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "format") {
      ls >> ply.format;
    } else if (tag == "element") {
      Element e;
      ls >> e.name >> e.count;
      ply.elements.push_back(e);
    } else if (tag == "property") {
      Property p;
      ls >> p.type;
      if (p.type == "list") ls >> p.count_type >> p.type;
      ls >> p.name;
      ply.elements.back().properties.push_back(p);
    }
  }
  const char* p = bytes.data() + end + std::strlen("end_header\n");
  const char* limit = bytes.data() + bytes.size();
  std::istringstream ascii(bytes.substr(end + std::strlen("end_header\n")));
  const bool binary = ply.format == "binary_little_endian";
  for (const Element& e : ply.elements) {
    auto& records = ply.data[e.name];
    for (size_t r = 0; r < e.count; ++r) {
      std::vector<double> values;
      for (const Property& prop : e.properties) {
        size_t n = 1;
        if (!prop.count_type.empty()) {
          double count;
          if (binary) {
            count = readBinary(prop.count_type, p);
          } else {
            ascii >> count;
          }
          n = static_cast<size_t>(count);
        }
        for (size_t k = 0; k < n; ++k) {
          double v;
          if (binary) {
            v = readBinary(prop.type, p);
          } else {
            std::string token;
            ascii >> token;
            v = prop.type == "float" ? double(std::strtof(token.c_str(), nullptr))
                                     : std::strtod(token.c_str(), nullptr);
          }
          values.push_back(v);
        }
      }
      records.push_back(values);
    }
  }
  if (binary) {
    EXPECT_EQ(p, limit) << "body size disagrees with the header";
  }
  return ply;
}

}  // namespace procgen::iotest
