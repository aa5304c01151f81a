#include "uop/ops.h"

namespace tg {

const char* op_name(Ops op) {
  static const char* names[] = {
#define TG_OP_NAME(name, group) #name,
      TG_FOR_EACH_OP(TG_OP_NAME)
#undef TG_OP_NAME
  };
  return names[static_cast<int>(op)];
}

OpGroup op_group(Ops op) {
  static const OpGroup groups[] = {
#define TG_OP_GROUP(name, group) OpGroup::group,
      TG_FOR_EACH_OP(TG_OP_GROUP)
#undef TG_OP_GROUP
  };
  return groups[static_cast<int>(op)];
}

}  // namespace tg
