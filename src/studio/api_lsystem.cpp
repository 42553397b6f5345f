// The studio's lsystem endpoints (issue 20). PLACEHOLDER: being written.
#include "studio/api.hpp"

namespace procgen::studio {

void registerLsystemEndpoints(Api& api) { (void)api; }

}  // namespace procgen::studio
