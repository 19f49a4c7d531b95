#pragma once
// Every scheduler, cloud launcher and MPI environment variable ddprun reads, by scheduler
// (spec/schedulers.md §1–§3, docs/schedulers.md for SkyPilot): the sched module's inputs, and
// the per-task variables fan-out must not forward.

#include <string_view>

namespace ddprun::sched::env_names {

// --- Slurm ---
inline constexpr std::string_view k_slurm_job_id = "SLURM_JOB_ID";
inline constexpr std::string_view k_slurm_job_id_legacy = "SLURM_JOBID";
inline constexpr std::string_view k_slurm_step_id = "SLURM_STEP_ID";
inline constexpr std::string_view k_slurm_step_id_legacy = "SLURM_STEPID";
inline constexpr std::string_view k_slurm_step_nodelist = "SLURM_STEP_NODELIST";
inline constexpr std::string_view k_slurm_step_num_nodes = "SLURM_STEP_NUM_NODES";
inline constexpr std::string_view k_slurm_nnodes = "SLURM_NNODES";
inline constexpr std::string_view k_slurm_job_num_nodes = "SLURM_JOB_NUM_NODES";
inline constexpr std::string_view k_slurm_job_nodelist = "SLURM_JOB_NODELIST";
inline constexpr std::string_view k_slurm_nodelist = "SLURM_NODELIST";
inline constexpr std::string_view k_slurm_nodeid = "SLURM_NODEID";
inline constexpr std::string_view k_slurm_step_tasks_per_node = "SLURM_STEP_TASKS_PER_NODE";
inline constexpr std::string_view k_slurm_ntasks_per_node = "SLURM_NTASKS_PER_NODE";
inline constexpr std::string_view k_slurm_gpus_on_node = "SLURM_GPUS_ON_NODE";
inline constexpr std::string_view k_slurm_restart_count = "SLURM_RESTART_COUNT";
inline constexpr std::string_view k_slurm_step_resv_ports = "SLURM_STEP_RESV_PORTS";
inline constexpr std::string_view k_slurmd_nodename = "SLURMD_NODENAME";
inline constexpr std::string_view k_slurm_het_size = "SLURM_HET_SIZE";
inline constexpr std::string_view k_slurm_submit_dir = "SLURM_SUBMIT_DIR";
inline constexpr std::string_view k_slurm_procid = "SLURM_PROCID";
inline constexpr std::string_view k_slurm_localid = "SLURM_LOCALID";
inline constexpr std::string_view k_slurm_topology_addr = "SLURM_TOPOLOGY_ADDR";
inline constexpr std::string_view k_slurm_topology_addr_pattern = "SLURM_TOPOLOGY_ADDR_PATTERN";

// --- PBS Pro / OpenPBS / Torque ---
inline constexpr std::string_view k_pbs_jobid = "PBS_JOBID";
inline constexpr std::string_view k_pbs_nodefile = "PBS_NODEFILE";
inline constexpr std::string_view k_pbs_nodenum = "PBS_NODENUM";
inline constexpr std::string_view k_pbs_ngpus = "PBS_NGPUS";  // site hook (NCI Gadi), not core
inline constexpr std::string_view k_pbs_o_workdir = "PBS_O_WORKDIR";
inline constexpr std::string_view k_pbs_jobfs = "PBS_JOBFS";  // site hook (NCI Gadi), not core
// Set by MoM for each TM task (pbsdsh, and the job script itself as task 1 on node 0).
inline constexpr std::string_view k_pbs_tasknum = "PBS_TASKNUM";
inline constexpr std::string_view k_pbs_vnodenum = "PBS_VNODENUM";
inline constexpr std::string_view k_pbs_jobcookie = "PBS_JOBCOOKIE";
inline constexpr std::string_view k_pbs_momport = "PBS_MOMPORT";

// --- LSF and jsrun ---
inline constexpr std::string_view k_lsb_jobid = "LSB_JOBID";
inline constexpr std::string_view k_lsb_jobindex = "LSB_JOBINDEX";
inline constexpr std::string_view k_lsb_mcpu_hosts = "LSB_MCPU_HOSTS";
inline constexpr std::string_view k_lsb_hosts = "LSB_HOSTS";
inline constexpr std::string_view k_jsm_local_size = "JSM_NAMESPACE_LOCAL_SIZE";
inline constexpr std::string_view k_jsm_rank = "JSM_NAMESPACE_RANK";

// --- Flux ---
inline constexpr std::string_view k_flux_job_id = "FLUX_JOB_ID";
inline constexpr std::string_view k_flux_job_size = "FLUX_JOB_SIZE";
inline constexpr std::string_view k_flux_job_nnodes = "FLUX_JOB_NNODES";
inline constexpr std::string_view k_flux_task_rank = "FLUX_TASK_RANK";

// --- SkyPilot (the run section of a task, on every node) ---
inline constexpr std::string_view k_skypilot_node_ips = "SKYPILOT_NODE_IPS";
inline constexpr std::string_view k_skypilot_num_nodes = "SKYPILOT_NUM_NODES";
inline constexpr std::string_view k_skypilot_node_rank = "SKYPILOT_NODE_RANK";
inline constexpr std::string_view k_skypilot_num_gpus_per_node = "SKYPILOT_NUM_GPUS_PER_NODE";
inline constexpr std::string_view k_skypilot_task_id = "SKYPILOT_TASK_ID";

// --- Open MPI ---
inline constexpr std::string_view k_ompi_size = "OMPI_COMM_WORLD_SIZE";
inline constexpr std::string_view k_ompi_rank = "OMPI_COMM_WORLD_RANK";
inline constexpr std::string_view k_ompi_local_size = "OMPI_COMM_WORLD_LOCAL_SIZE";
inline constexpr std::string_view k_pmix_namespace = "PMIX_NAMESPACE";
inline constexpr std::string_view k_pmix_rank = "PMIX_RANK";

// --- MPICH / Hydra / Intel MPI ---
inline constexpr std::string_view k_pmi_size = "PMI_SIZE";
inline constexpr std::string_view k_pmi_rank = "PMI_RANK";
inline constexpr std::string_view k_mpi_localnranks = "MPI_LOCALNRANKS";

// --- MVAPICH2, Cray PALS ---
inline constexpr std::string_view k_mv2_rank = "MV2_COMM_WORLD_RANK";
inline constexpr std::string_view k_pals_rankid = "PALS_RANKID";

// --- GPUs ---
inline constexpr std::string_view k_cuda_visible_devices = "CUDA_VISIBLE_DEVICES";

}  // namespace ddprun::sched::env_names
