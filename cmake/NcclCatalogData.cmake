# The catalogue of NCCL's WARN messages (data/nccl-messages/) compiled in as
# a generated header, logs/nccl_catalog_data.h under OUT_DIR. The logs module
# and the nccl_log fuzzer (fuzz/CMakeLists.txt) both compile
# src/logs/nccl_catalog.cc, so both generate it the same way from here.
function(fabcheck_nccl_catalog_data out_dir)
  set(families ${CMAKE_SOURCE_DIR}/data/nccl-messages/families.json)
  set(formats ${CMAKE_SOURCE_DIR}/data/nccl-messages/formats.tsv)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${families} ${formats})
  file(READ ${families} nccl_families_text)
  file(READ ${formats} nccl_formats_text)
  file(CONFIGURE OUTPUT ${out_dir}/logs/nccl_catalog_data.h CONTENT
"// Generated from data/nccl-messages/ by cmake/NcclCatalogData.cmake; do not edit.
#pragma once

namespace fabcheck::logs {

inline constexpr const char kNcclMessageFamiliesJson[] = R\"fabcheck_data(@nccl_families_text@)fabcheck_data\";
inline constexpr const char kNcclMessageFormatsTsv[] = R\"fabcheck_data(@nccl_formats_text@)fabcheck_data\";

}  // namespace fabcheck::logs
" @ONLY)
endfunction()
