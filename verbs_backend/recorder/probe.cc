// recorder_test's program: a few librdmacm and libibverbs calls, printing each result and errno (the recorder must
// not change them). On a host without RDMA devices the calls fail; with a device they create and destroy a cm_id.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdio>

int main() {
  int n = -1;
  ibv_device** devs = ibv_get_device_list(&n);
  std::printf("ibv_get_device_list: %d devices\n", devs ? n : -1);
  if (devs) ibv_free_device_list(devs);
  rdma_event_channel* ch = rdma_create_event_channel();
  std::printf("rdma_create_event_channel: %s errno=%d\n", ch ? "ok" : "NULL", ch ? 0 : errno);
  rdma_cm_id* id = nullptr;
  errno = 0;
  int ret = rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP);
  std::printf("rdma_create_id: %d errno=%d\n", ret, ret ? errno : 0);
  if (ret == 0) {
    errno = 0;
    ret = rdma_destroy_id(id);
    std::printf("rdma_destroy_id: %d errno=%d\n", ret, ret ? errno : 0);
  }
  rdma_cm_id* udp = nullptr;
  errno = 0;
  ret = rdma_create_id(ch, &udp, nullptr, RDMA_PS_UDP);
  std::printf("rdma_create_id(UDP): %d errno=%d\n", ret, ret ? errno : 0);
  if (ret == 0) rdma_destroy_id(udp);
  if (ch) rdma_destroy_event_channel(ch);
  return 0;
}
