# Step 9 (deliver_rep) of 03_patch_passive_first_ib: the model now claims RDMA_CM_EVENT_REJECTED for the active side.
(.steps[8].calls[] | select(.replay != null) | .replay[0].args[1]) = "RDMA_CM_EVENT_REJECTED"
