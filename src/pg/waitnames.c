/* Wait event names per PostgreSQL major version, as pg_stat_activity prints them. */
#include <stddef.h>

#include "pg/waitevent.h"

/*
 * One array per class and version, indexed by the event id (the low 16 bits of
 * wait_event_info); versions that print the same names share an array. NULL: an id
 * the version leaves unassigned. Each is what that release's own server prints in
 * pg_stat_activity for each id (12.22, 13.23, 14.22, 15.18, 16.13, 17.9, 18.3, asked
 * one id at a time), checked against the sources of 13.16, 15.18 and 18.6; 18 adds the
 * IPC event 18.6 appends. LWLock ids are the individual locks, then the built-in
 * tranches; 12 names them as registered at start (WALWriteLock, buffer_content).
 */

static const char *const lwlock_12[] = {
	NULL, "ShmemIndexLock", "OidGenLock", "XidGenLock", "ProcArrayLock", "SInvalReadLock",
	"SInvalWriteLock", "WALBufMappingLock", "WALWriteLock", "ControlFileLock",
	"CheckpointLock", "CLogControlLock", "SubtransControlLock", "MultiXactGenLock",
	"MultiXactOffsetControlLock", "MultiXactMemberControlLock", "RelCacheInitLock",
	"CheckpointerCommLock", "TwoPhaseStateLock", "TablespaceCreateLock", "BtreeVacuumLock",
	"AddinShmemInitLock", "AutovacuumLock", "AutovacuumScheduleLock", "SyncScanLock",
	"RelationMappingLock", "AsyncCtlLock", "AsyncQueueLock", "SerializableXactHashLock",
	"SerializableFinishedListLock", "SerializablePredicateLockListLock", "OldSerXidLock",
	"SyncRepLock", "BackgroundWorkerLock", "DynamicSharedMemoryControlLock", "AutoFileLock",
	"ReplicationSlotAllocationLock", "ReplicationSlotControlLock", "CommitTsControlLock",
	"CommitTsLock", "ReplicationOriginLock", "MultiXactTruncationLock",
	"OldSnapshotTimeMapLock", "LogicalRepWorkerLock", "CLogTruncationLock", NULL,
	"WrapLimitsVacuumLock", "NotifyQueueTailLock", "clog", "commit_timestamp", "subtrans",
	"multixact_offset", "multixact_member", "async", "oldserxid", "wal_insert",
	"buffer_content", "buffer_io", "replication_origin", "replication_slot_io", "proc",
	"buffer_mapping", "lock_manager", "predicate_lock_manager", "parallel_hash_join",
	"parallel_query_dsa", "session_dsa", "session_record_table", "session_typmod_table",
	"shared_tuplestore", "tbm", "parallel_append", "serializable_xact",
};

static const char *const lock_12[] = {
	"relation", "extend", "page", "tuple", "transactionid", "virtualxid", "speculative token",
	"object", "userlock", "advisory", "frozenid",
};

static const char *const bufferpin_12[] = {
	"BufferPin",
};

static const char *const activity_12[] = {
	"ArchiverMain", "AutoVacuumMain", "BgWriterHibernate", "BgWriterMain", "CheckpointerMain",
	"LogicalApplyMain", "LogicalLauncherMain", "PgStatMain", "RecoveryWalAll",
	"RecoveryWalStream", "SysLoggerMain", "WalReceiverMain", "WalSenderMain", "WalWriterMain",
};

static const char *const client_12[] = {
	"ClientRead", "ClientWrite", "LibPQWalReceiverConnect", "LibPQWalReceiverReceive",
	"SSLOpenServer", "WalReceiverWaitStart", "WalSenderWaitForWAL", "WalSenderWriteData",
	"GSSOpenServer",
};

static const char *const extension_12[] = {
	"Extension",
};

static const char *const ipc_12[] = {
	"BgWorkerShutdown", "BgWorkerStartup", "BtreePage", "ClogGroupUpdate", "CheckpointDone",
	"CheckpointStart", "ExecuteGather", "Hash/Batch/Allocating", "Hash/Batch/Electing",
	"Hash/Batch/Loading", "Hash/Build/Allocating", "Hash/Build/Electing",
	"Hash/Build/HashingInner", "Hash/Build/HashingOuter", "Hash/GrowBatches/Allocating",
	"Hash/GrowBatches/Deciding", "Hash/GrowBatches/Electing", "Hash/GrowBatches/Finishing",
	"Hash/GrowBatches/Repartitioning", "Hash/GrowBuckets/Allocating",
	"Hash/GrowBuckets/Electing", "Hash/GrowBuckets/Reinserting", "LogicalSyncData",
	"LogicalSyncStateChange", "MessageQueueInternal", "MessageQueuePutMessage",
	"MessageQueueReceive", "MessageQueueSend", "ParallelBitmapScan",
	"ParallelCreateIndexScan", "ParallelFinish", "ProcArrayGroupUpdate", "Promote",
	"ReplicationOriginDrop", "ReplicationSlotDrop", "SafeSnapshot", "SyncRep",
};

static const char *const timeout_12[] = {
	"BaseBackupThrottle", "PgSleep", "RecoveryApplyDelay", "RegisterSyncRequest",
};

static const char *const io_12[] = {
	"BufFileRead", "BufFileWrite", "ControlFileRead", "ControlFileSync",
	"ControlFileSyncUpdate", "ControlFileWrite", "ControlFileWriteUpdate", "CopyFileRead",
	"CopyFileWrite", "DataFileExtend", "DataFileFlush", "DataFileImmediateSync",
	"DataFilePrefetch", "DataFileRead", "DataFileSync", "DataFileTruncate", "DataFileWrite",
	"DSMFillZeroWrite", "LockFileAddToDataDirRead", "LockFileAddToDataDirSync",
	"LockFileAddToDataDirWrite", "LockFileCreateRead", "LockFileCreateSync",
	"LockFileCreateWrite", "LockFileReCheckDataDirRead", "LogicalRewriteCheckpointSync",
	"LogicalRewriteMappingSync", "LogicalRewriteMappingWrite", "LogicalRewriteSync",
	"LogicalRewriteTruncate", "LogicalRewriteWrite", "RelationMapRead", "RelationMapSync",
	"RelationMapWrite", "ReorderBufferRead", "ReorderBufferWrite",
	"ReorderLogicalMappingRead", "ReplicationSlotRead", "ReplicationSlotRestoreSync",
	"ReplicationSlotSync", "ReplicationSlotWrite", "SLRUFlushSync", "SLRURead", "SLRUSync",
	"SLRUWrite", "SnapbuildRead", "SnapbuildSync", "SnapbuildWrite",
	"TimelineHistoryFileSync", "TimelineHistoryFileWrite", "TimelineHistoryRead",
	"TimelineHistorySync", "TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync",
	"TwophaseFileWrite", "WALSenderTimelineHistoryRead", "WALBootstrapSync",
	"WALBootstrapWrite", "WALCopyRead", "WALCopySync", "WALCopyWrite", "WALInitSync",
	"WALInitWrite", "WALRead", "WALSync", "WALSyncMethodAssign", "WALWrite",
};

static const char *const lwlock_13[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", "Checkpoint", "XactSLRU", "SubtransSLRU",
	"MultiXactGen", "MultiXactOffsetSLRU", "MultiXactMemberSLRU", "RelCacheInit",
	"CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum", "AddinShmemInit",
	"Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", "NotifySLRU",
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", "SerialSLRU", "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", "CommitTsSLRU", "CommitTs", "ReplicationOrigin",
	"MultiXactTruncation", "OldSnapshotTimeMap", "LogicalRepWorker", "XactTruncation", NULL,
	"WrapLimitsVacuum", "NotifyQueueTail", "XactBuffer", "CommitTsBuffer", "SubtransBuffer",
	"MultiXactOffsetBuffer", "MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer",
	"WALInsert", "BufferContent", "BufferIO", "ReplicationOriginState", "ReplicationSlotIO",
	"LockFastPath", "BufferMapping", "LockManager", "PredicateLockManager",
	"ParallelHashJoin", "ParallelQueryDSA", "PerSessionDSA", "PerSessionRecordType",
	"PerSessionRecordTypmod", "SharedTupleStore", "SharedTidBitmap", "ParallelAppend",
	"PerXactPredicateList",
};

static const char *const lock_13[] = {
	"relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
	"spectoken", "object", "userlock", "advisory",
};

static const char *const activity_13[] = {
	"ArchiverMain", "AutoVacuumMain", "BgWriterHibernate", "BgWriterMain", "CheckpointerMain",
	"LogicalApplyMain", "LogicalLauncherMain", "PgStatMain", "RecoveryWalStream",
	"SysLoggerMain", "WalReceiverMain", "WalSenderMain", "WalWriterMain",
};

static const char *const client_13[] = {
	"ClientRead", "ClientWrite", "GSSOpenServer", "LibPQWalReceiverConnect",
	"LibPQWalReceiverReceive", "SSLOpenServer", "WalReceiverWaitStart", "WalSenderWaitForWAL",
	"WalSenderWriteData",
};

static const char *const ipc_13[] = {
	"BackupWaitWalArchive", "BgWorkerShutdown", "BgWorkerStartup", "BtreePage",
	"CheckpointDone", "CheckpointStart", "ExecuteGather", "HashBatchAllocate",
	"HashBatchElect", "HashBatchLoad", "HashBuildAllocate", "HashBuildElect",
	"HashBuildHashInner", "HashBuildHashOuter", "HashGrowBatchesAllocate",
	"HashGrowBatchesDecide", "HashGrowBatchesElect", "HashGrowBatchesFinish",
	"HashGrowBatchesRepartition", "HashGrowBucketsAllocate", "HashGrowBucketsElect",
	"HashGrowBucketsReinsert", "LogicalSyncData", "LogicalSyncStateChange",
	"MessageQueueInternal", "MessageQueuePutMessage", "MessageQueueReceive",
	"MessageQueueSend", "ParallelBitmapScan", "ParallelCreateIndexScan", "ParallelFinish",
	"ProcArrayGroupUpdate", "ProcSignalBarrier", "Promote", "RecoveryConflictSnapshot",
	"RecoveryConflictTablespace", "RecoveryPause", "ReplicationOriginDrop",
	"ReplicationSlotDrop", "SafeSnapshot", "SyncRep", "XactGroupUpdate",
};

static const char *const timeout_13[] = {
	"BaseBackupThrottle", "PgSleep", "RecoveryApplyDelay", "RecoveryRetrieveRetryInterval",
	"VacuumDelay", "RegisterSyncRequest",
};

static const char *const lwlock_14[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", NULL, "XactSLRU", "SubtransSLRU",
	"MultiXactGen", "MultiXactOffsetSLRU", "MultiXactMemberSLRU", "RelCacheInit",
	"CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum", "AddinShmemInit",
	"Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", "NotifySLRU",
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", "SerialSLRU", "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", "CommitTsSLRU", "CommitTs", "ReplicationOrigin",
	"MultiXactTruncation", "OldSnapshotTimeMap", "LogicalRepWorker", "XactTruncation", NULL,
	"WrapLimitsVacuum", "NotifyQueueTail", "XactBuffer", "CommitTsBuffer", "SubtransBuffer",
	"MultiXactOffsetBuffer", "MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer",
	"WALInsert", "BufferContent", "ReplicationOriginState", "ReplicationSlotIO",
	"LockFastPath", "BufferMapping", "LockManager", "PredicateLockManager",
	"ParallelHashJoin", "ParallelQueryDSA", "PerSessionDSA", "PerSessionRecordType",
	"PerSessionRecordTypmod", "SharedTupleStore", "SharedTidBitmap", "ParallelAppend",
	"PerXactPredicateList",
};

static const char *const client_14[] = {
	"ClientRead", "ClientWrite", "GSSOpenServer", "LibPQWalReceiverConnect",
	"LibPQWalReceiverReceive", "SSLOpenServer", "WalSenderWaitForWAL", "WalSenderWriteData",
};

static const char *const ipc_14[] = {
	"AppendReady", "BackendTermination", "BackupWaitWalArchive", "BgWorkerShutdown",
	"BgWorkerStartup", "BtreePage", "BufferIO", "CheckpointDone", "CheckpointStart",
	"ExecuteGather", "HashBatchAllocate", "HashBatchElect", "HashBatchLoad",
	"HashBuildAllocate", "HashBuildElect", "HashBuildHashInner", "HashBuildHashOuter",
	"HashGrowBatchesAllocate", "HashGrowBatchesDecide", "HashGrowBatchesElect",
	"HashGrowBatchesFinish", "HashGrowBatchesRepartition", "HashGrowBucketsAllocate",
	"HashGrowBucketsElect", "HashGrowBucketsReinsert", "LogicalSyncData",
	"LogicalSyncStateChange", "MessageQueueInternal", "MessageQueuePutMessage",
	"MessageQueueReceive", "MessageQueueSend", "ParallelBitmapScan",
	"ParallelCreateIndexScan", "ParallelFinish", "ProcArrayGroupUpdate", "ProcSignalBarrier",
	"Promote", "RecoveryConflictSnapshot", "RecoveryConflictTablespace", "RecoveryPause",
	"ReplicationOriginDrop", "ReplicationSlotDrop", "SafeSnapshot", "SyncRep",
	"WalReceiverExit", "WalReceiverWaitStart", "XactGroupUpdate",
};

static const char *const timeout_14[] = {
	"BaseBackupThrottle", "PgSleep", "RecoveryApplyDelay", "RecoveryRetrieveRetryInterval",
	"VacuumDelay", "CheckpointWriteDelay", "RegisterSyncRequest",
};

static const char *const io_14[] = {
	"BaseBackupRead", "BufFileRead", "BufFileWrite", "BufFileTruncate", "ControlFileRead",
	"ControlFileSync", "ControlFileSyncUpdate", "ControlFileWrite", "ControlFileWriteUpdate",
	"CopyFileRead", "CopyFileWrite", "DataFileExtend", "DataFileFlush",
	"DataFileImmediateSync", "DataFilePrefetch", "DataFileRead", "DataFileSync",
	"DataFileTruncate", "DataFileWrite", "DSMFillZeroWrite", "LockFileAddToDataDirRead",
	"LockFileAddToDataDirSync", "LockFileAddToDataDirWrite", "LockFileCreateRead",
	"LockFileCreateSync", "LockFileCreateWrite", "LockFileReCheckDataDirRead",
	"LogicalRewriteCheckpointSync", "LogicalRewriteMappingSync", "LogicalRewriteMappingWrite",
	"LogicalRewriteSync", "LogicalRewriteTruncate", "LogicalRewriteWrite", "RelationMapRead",
	"RelationMapSync", "RelationMapWrite", "ReorderBufferRead", "ReorderBufferWrite",
	"ReorderLogicalMappingRead", "ReplicationSlotRead", "ReplicationSlotRestoreSync",
	"ReplicationSlotSync", "ReplicationSlotWrite", "SLRUFlushSync", "SLRURead", "SLRUSync",
	"SLRUWrite", "SnapbuildRead", "SnapbuildSync", "SnapbuildWrite",
	"TimelineHistoryFileSync", "TimelineHistoryFileWrite", "TimelineHistoryRead",
	"TimelineHistorySync", "TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync",
	"TwophaseFileWrite", "WALSenderTimelineHistoryRead", "WALBootstrapSync",
	"WALBootstrapWrite", "WALCopyRead", "WALCopySync", "WALCopyWrite", "WALInitSync",
	"WALInitWrite", "WALRead", "WALSync", "WALSyncMethodAssign", "WALWrite",
	"LogicalChangesRead", "LogicalChangesWrite", "LogicalSubxactRead", "LogicalSubxactWrite",
};

static const char *const lwlock_15[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", NULL, "XactSLRU", "SubtransSLRU",
	"MultiXactGen", "MultiXactOffsetSLRU", "MultiXactMemberSLRU", "RelCacheInit",
	"CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum", "AddinShmemInit",
	"Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", "NotifySLRU",
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", "SerialSLRU", "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", "CommitTsSLRU", "CommitTs", "ReplicationOrigin",
	"MultiXactTruncation", "OldSnapshotTimeMap", "LogicalRepWorker", "XactTruncation", NULL,
	"WrapLimitsVacuum", "NotifyQueueTail", "XactBuffer", "CommitTsBuffer", "SubtransBuffer",
	"MultiXactOffsetBuffer", "MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer",
	"WALInsert", "BufferContent", "ReplicationOriginState", "ReplicationSlotIO",
	"LockFastPath", "BufferMapping", "LockManager", "PredicateLockManager",
	"ParallelHashJoin", "ParallelQueryDSA", "PerSessionDSA", "PerSessionRecordType",
	"PerSessionRecordTypmod", "SharedTupleStore", "SharedTidBitmap", "ParallelAppend",
	"PerXactPredicateList", "PgStatsDSA", "PgStatsHash", "PgStatsData",
};

static const char *const activity_15[] = {
	"ArchiverMain", "AutoVacuumMain", "BgWriterHibernate", "BgWriterMain", "CheckpointerMain",
	"LogicalApplyMain", "LogicalLauncherMain", "RecoveryWalStream", "SysLoggerMain",
	"WalReceiverMain", "WalSenderMain", "WalWriterMain",
};

static const char *const ipc_15[] = {
	"AppendReady", "ArchiveCleanupCommand", "ArchiveCommand", "BackendTermination",
	"BackupWaitWalArchive", "BgWorkerShutdown", "BgWorkerStartup", "BtreePage", "BufferIO",
	"CheckpointDone", "CheckpointStart", "ExecuteGather", "HashBatchAllocate",
	"HashBatchElect", "HashBatchLoad", "HashBuildAllocate", "HashBuildElect",
	"HashBuildHashInner", "HashBuildHashOuter", "HashGrowBatchesAllocate",
	"HashGrowBatchesDecide", "HashGrowBatchesElect", "HashGrowBatchesFinish",
	"HashGrowBatchesRepartition", "HashGrowBucketsAllocate", "HashGrowBucketsElect",
	"HashGrowBucketsReinsert", "LogicalSyncData", "LogicalSyncStateChange",
	"MessageQueueInternal", "MessageQueuePutMessage", "MessageQueueReceive",
	"MessageQueueSend", "ParallelBitmapScan", "ParallelCreateIndexScan", "ParallelFinish",
	"ProcArrayGroupUpdate", "ProcSignalBarrier", "Promote", "RecoveryConflictSnapshot",
	"RecoveryConflictTablespace", "RecoveryEndCommand", "RecoveryPause",
	"ReplicationOriginDrop", "ReplicationSlotDrop", "RestoreCommand", "SafeSnapshot",
	"SyncRep", "WalReceiverExit", "WalReceiverWaitStart", "XactGroupUpdate",
};

static const char *const timeout_15[] = {
	"BaseBackupThrottle", "CheckpointWriteDelay", "PgSleep", "RecoveryApplyDelay",
	"RecoveryRetrieveRetryInterval", "RegisterSyncRequest", "VacuumDelay", "VacuumTruncate",
};

static const char *const io_15[] = {
	"BaseBackupRead", "BaseBackupSync", "BaseBackupWrite", "BufFileRead", "BufFileWrite",
	"BufFileTruncate", "ControlFileRead", "ControlFileSync", "ControlFileSyncUpdate",
	"ControlFileWrite", "ControlFileWriteUpdate", "CopyFileRead", "CopyFileWrite",
	"DataFileExtend", "DataFileFlush", "DataFileImmediateSync", "DataFilePrefetch",
	"DataFileRead", "DataFileSync", "DataFileTruncate", "DataFileWrite", "DSMFillZeroWrite",
	"LockFileAddToDataDirRead", "LockFileAddToDataDirSync", "LockFileAddToDataDirWrite",
	"LockFileCreateRead", "LockFileCreateSync", "LockFileCreateWrite",
	"LockFileReCheckDataDirRead", "LogicalRewriteCheckpointSync", "LogicalRewriteMappingSync",
	"LogicalRewriteMappingWrite", "LogicalRewriteSync", "LogicalRewriteTruncate",
	"LogicalRewriteWrite", "RelationMapRead", "RelationMapSync", "RelationMapWrite",
	"ReorderBufferRead", "ReorderBufferWrite", "ReorderLogicalMappingRead",
	"ReplicationSlotRead", "ReplicationSlotRestoreSync", "ReplicationSlotSync",
	"ReplicationSlotWrite", "SLRUFlushSync", "SLRURead", "SLRUSync", "SLRUWrite",
	"SnapbuildRead", "SnapbuildSync", "SnapbuildWrite", "TimelineHistoryFileSync",
	"TimelineHistoryFileWrite", "TimelineHistoryRead", "TimelineHistorySync",
	"TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync", "TwophaseFileWrite",
	"VersionFileWrite", "WALSenderTimelineHistoryRead", "WALBootstrapSync",
	"WALBootstrapWrite", "WALCopyRead", "WALCopySync", "WALCopyWrite", "WALInitSync",
	"WALInitWrite", "WALRead", "WALSync", "WALSyncMethodAssign", "WALWrite",
	"VersionFileSync",
};

static const char *const lwlock_16[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", NULL, "XactSLRU", "SubtransSLRU",
	"MultiXactGen", "MultiXactOffsetSLRU", "MultiXactMemberSLRU", "RelCacheInit",
	"CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum", "AddinShmemInit",
	"Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", "NotifySLRU",
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", "SerialSLRU", "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", "CommitTsSLRU", "CommitTs", "ReplicationOrigin",
	"MultiXactTruncation", "OldSnapshotTimeMap", "LogicalRepWorker", "XactTruncation", NULL,
	"WrapLimitsVacuum", "NotifyQueueTail", "XactBuffer", "CommitTsBuffer", "SubtransBuffer",
	"MultiXactOffsetBuffer", "MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer",
	"WALInsert", "BufferContent", "ReplicationOriginState", "ReplicationSlotIO",
	"LockFastPath", "BufferMapping", "LockManager", "PredicateLockManager",
	"ParallelHashJoin", "ParallelQueryDSA", "PerSessionDSA", "PerSessionRecordType",
	"PerSessionRecordTypmod", "SharedTupleStore", "SharedTidBitmap", "ParallelAppend",
	"PerXactPredicateList", "PgStatsDSA", "PgStatsHash", "PgStatsData",
	"LogicalRepLauncherDSA", "LogicalRepLauncherHash",
};

static const char *const lock_16[] = {
	"relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
	"spectoken", "object", "userlock", "advisory", "applytransaction",
};

static const char *const activity_16[] = {
	"ArchiverMain", "AutoVacuumMain", "BgWriterHibernate", "BgWriterMain", "CheckpointerMain",
	"LogicalApplyMain", "LogicalLauncherMain", "LogicalParallelApplyMain",
	"RecoveryWalStream", "SysLoggerMain", "WalReceiverMain", "WalSenderMain", "WalWriterMain",
};

static const char *const ipc_16[] = {
	"AppendReady", "ArchiveCleanupCommand", "ArchiveCommand", "BackendTermination",
	"BackupWaitWalArchive", "BgWorkerShutdown", "BgWorkerStartup", "BtreePage", "BufferIO",
	"CheckpointDone", "CheckpointStart", "ExecuteGather", "HashBatchAllocate",
	"HashBatchElect", "HashBatchLoad", "HashBuildAllocate", "HashBuildElect",
	"HashBuildHashInner", "HashBuildHashOuter", "HashGrowBatchesDecide",
	"HashGrowBatchesElect", "HashGrowBatchesFinish", "HashGrowBatchesReallocate",
	"HashGrowBatchesRepartition", "HashGrowBucketsElect", "HashGrowBucketsReallocate",
	"HashGrowBucketsReinsert", "LogicalApplySendData", "LogicalParallelApplyStateChange",
	"LogicalSyncData", "LogicalSyncStateChange", "MessageQueueInternal",
	"MessageQueuePutMessage", "MessageQueueReceive", "MessageQueueSend", "ParallelBitmapScan",
	"ParallelCreateIndexScan", "ParallelFinish", "ProcArrayGroupUpdate", "ProcSignalBarrier",
	"Promote", "RecoveryConflictSnapshot", "RecoveryConflictTablespace", "RecoveryEndCommand",
	"RecoveryPause", "ReplicationOriginDrop", "ReplicationSlotDrop", "RestoreCommand",
	"SafeSnapshot", "SyncRep", "WalReceiverExit", "WalReceiverWaitStart", "XactGroupUpdate",
};

static const char *const timeout_16[] = {
	"BaseBackupThrottle", "CheckpointWriteDelay", "PgSleep", "RecoveryApplyDelay",
	"RecoveryRetrieveRetryInterval", "RegisterSyncRequest", "SpinDelay", "VacuumDelay",
	"VacuumTruncate",
};

static const char *const io_16[] = {
	"BaseBackupRead", "BaseBackupSync", "BaseBackupWrite", "BufFileRead", "BufFileWrite",
	"BufFileTruncate", "ControlFileRead", "ControlFileSync", "ControlFileSyncUpdate",
	"ControlFileWrite", "ControlFileWriteUpdate", "CopyFileRead", "CopyFileWrite",
	"DataFileExtend", "DataFileFlush", "DataFileImmediateSync", "DataFilePrefetch",
	"DataFileRead", "DataFileSync", "DataFileTruncate", "DataFileWrite", "DSMAllocate",
	"DSMFillZeroWrite", "LockFileAddToDataDirRead", "LockFileAddToDataDirSync",
	"LockFileAddToDataDirWrite", "LockFileCreateRead", "LockFileCreateSync",
	"LockFileCreateWrite", "LockFileReCheckDataDirRead", "LogicalRewriteCheckpointSync",
	"LogicalRewriteMappingSync", "LogicalRewriteMappingWrite", "LogicalRewriteSync",
	"LogicalRewriteTruncate", "LogicalRewriteWrite", "RelationMapRead", "RelationMapReplace",
	"RelationMapWrite", "ReorderBufferRead", "ReorderBufferWrite",
	"ReorderLogicalMappingRead", "ReplicationSlotRead", "ReplicationSlotRestoreSync",
	"ReplicationSlotSync", "ReplicationSlotWrite", "SLRUFlushSync", "SLRURead", "SLRUSync",
	"SLRUWrite", "SnapbuildRead", "SnapbuildSync", "SnapbuildWrite",
	"TimelineHistoryFileSync", "TimelineHistoryFileWrite", "TimelineHistoryRead",
	"TimelineHistorySync", "TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync",
	"TwophaseFileWrite", "VersionFileWrite", "WALSenderTimelineHistoryRead",
	"WALBootstrapSync", "WALBootstrapWrite", "WALCopyRead", "WALCopySync", "WALCopyWrite",
	"WALInitSync", "WALInitWrite", "WALRead", "WALSync", "WALSyncMethodAssign", "WALWrite",
	"VersionFileSync",
};

static const char *const lwlock_17[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", NULL, NULL, NULL, "MultiXactGen", NULL, NULL,
	"RelCacheInit", "CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum",
	"AddinShmemInit", "Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", NULL,
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", NULL, "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", NULL, "CommitTs", "ReplicationOrigin", "MultiXactTruncation",
	NULL, "LogicalRepWorker", "XactTruncation", NULL, "WrapLimitsVacuum", "NotifyQueueTail",
	"WaitEventCustom", "WALSummarizer", "DSMRegistry", "InjectionPoint", "SerialControl",
	"XactBuffer", "CommitTsBuffer", "SubtransBuffer", "MultiXactOffsetBuffer",
	"MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer", "WALInsert", "BufferContent",
	"ReplicationOriginState", "ReplicationSlotIO", "LockFastPath", "BufferMapping",
	"LockManager", "PredicateLockManager", "ParallelHashJoin", "ParallelQueryDSA",
	"PerSessionDSA", "PerSessionRecordType", "PerSessionRecordTypmod", "SharedTupleStore",
	"SharedTidBitmap", "ParallelAppend", "PerXactPredicateList", "PgStatsDSA", "PgStatsHash",
	"PgStatsData", "LogicalRepLauncherDSA", "LogicalRepLauncherHash", "DSMRegistryDSA",
	"DSMRegistryHash", "CommitTsSLRU", "MultiXactMemberSLRU", "MultiXactOffsetSLRU",
	"NotifySLRU", "SerialSLRU", "SubtransSLRU", "XactSLRU", "ParallelVacuumDSA",
};

static const char *const activity_17[] = {
	"ArchiverMain", "AutovacuumMain", "BgwriterHibernate", "BgwriterMain", "CheckpointerMain",
	"LogicalApplyMain", "LogicalLauncherMain", "LogicalParallelApplyMain",
	"RecoveryWalStream", "ReplicationSlotsyncMain", "ReplicationSlotsyncShutdown",
	"SysloggerMain", "WalReceiverMain", "WalSenderMain", "WalSummarizerWal", "WalWriterMain",
};

static const char *const client_17[] = {
	"ClientRead", "ClientWrite", "GssOpenServer", "LibpqwalreceiverConnect",
	"LibpqwalreceiverReceive", "SslOpenServer", "WaitForStandbyConfirmation",
	"WalSenderWaitForWal", "WalSenderWriteData",
};

static const char *const ipc_17[] = {
	"AppendReady", "ArchiveCleanupCommand", "ArchiveCommand", "BackendTermination",
	"BackupWaitWalArchive", "BgworkerShutdown", "BgworkerStartup", "BtreePage", "BufferIo",
	"CheckpointDelayComplete", "CheckpointDelayStart", "CheckpointDone", "CheckpointStart",
	"ExecuteGather", "HashBatchAllocate", "HashBatchElect", "HashBatchLoad",
	"HashBuildAllocate", "HashBuildElect", "HashBuildHashInner", "HashBuildHashOuter",
	"HashGrowBatchesDecide", "HashGrowBatchesElect", "HashGrowBatchesFinish",
	"HashGrowBatchesReallocate", "HashGrowBatchesRepartition", "HashGrowBucketsElect",
	"HashGrowBucketsReallocate", "HashGrowBucketsReinsert", "LogicalApplySendData",
	"LogicalParallelApplyStateChange", "LogicalSyncData", "LogicalSyncStateChange",
	"MessageQueueInternal", "MessageQueuePutMessage", "MessageQueueReceive",
	"MessageQueueSend", "MultixactCreation", "ParallelBitmapScan", "ParallelCreateIndexScan",
	"ParallelFinish", "ProcarrayGroupUpdate", "ProcSignalBarrier", "Promote",
	"RecoveryConflictSnapshot", "RecoveryConflictTablespace", "RecoveryEndCommand",
	"RecoveryPause", "ReplicationOriginDrop", "ReplicationSlotDrop", "RestoreCommand",
	"SafeSnapshot", "SyncRep", "WalReceiverExit", "WalReceiverWaitStart", "WalSummaryReady",
	"XactGroupUpdate",
};

static const char *const timeout_17[] = {
	"BaseBackupThrottle", "CheckpointWriteDelay", "PgSleep", "RecoveryApplyDelay",
	"RecoveryRetrieveRetryInterval", "RegisterSyncRequest", "SpinDelay", "VacuumDelay",
	"VacuumTruncate", "WalSummarizerError",
};

static const char *const io_17[] = {
	"BasebackupRead", "BasebackupSync", "BasebackupWrite", "BuffileRead", "BuffileTruncate",
	"BuffileWrite", "ControlFileRead", "ControlFileSync", "ControlFileSyncUpdate",
	"ControlFileWrite", "ControlFileWriteUpdate", "CopyFileRead", "CopyFileWrite",
	"DataFileExtend", "DataFileFlush", "DataFileImmediateSync", "DataFilePrefetch",
	"DataFileRead", "DataFileSync", "DataFileTruncate", "DataFileWrite", "DsmAllocate",
	"DsmFillZeroWrite", "LockFileAddtodatadirRead", "LockFileAddtodatadirSync",
	"LockFileAddtodatadirWrite", "LockFileCreateRead", "LockFileCreateSync",
	"LockFileCreateWrite", "LockFileRecheckdatadirRead", "LogicalRewriteCheckpointSync",
	"LogicalRewriteMappingSync", "LogicalRewriteMappingWrite", "LogicalRewriteSync",
	"LogicalRewriteTruncate", "LogicalRewriteWrite", "RelationMapRead", "RelationMapReplace",
	"RelationMapWrite", "ReorderBufferRead", "ReorderBufferWrite",
	"ReorderLogicalMappingRead", "ReplicationSlotRead", "ReplicationSlotRestoreSync",
	"ReplicationSlotSync", "ReplicationSlotWrite", "SlruFlushSync", "SlruRead", "SlruSync",
	"SlruWrite", "SnapbuildRead", "SnapbuildSync", "SnapbuildWrite",
	"TimelineHistoryFileSync", "TimelineHistoryFileWrite", "TimelineHistoryRead",
	"TimelineHistorySync", "TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync",
	"TwophaseFileWrite", "VersionFileSync", "VersionFileWrite",
	"WalsenderTimelineHistoryRead", "WalBootstrapSync", "WalBootstrapWrite", "WalCopyRead",
	"WalCopySync", "WalCopyWrite", "WalInitSync", "WalInitWrite", "WalRead", "WalSummaryRead",
	"WalSummaryWrite", "WalSync", "WalSyncMethodAssign", "WalWrite",
};

static const char *const lwlock_18[] = {
	NULL, "ShmemIndex", "OidGen", "XidGen", "ProcArray", "SInvalRead", "SInvalWrite",
	"WALBufMapping", "WALWrite", "ControlFile", NULL, NULL, NULL, "MultiXactGen", NULL, NULL,
	"RelCacheInit", "CheckpointerComm", "TwoPhaseState", "TablespaceCreate", "BtreeVacuum",
	"AddinShmemInit", "Autovacuum", "AutovacuumSchedule", "SyncScan", "RelationMapping", NULL,
	"NotifyQueue", "SerializableXactHash", "SerializableFinishedList",
	"SerializablePredicateList", NULL, "SyncRep", "BackgroundWorker",
	"DynamicSharedMemoryControl", "AutoFile", "ReplicationSlotAllocation",
	"ReplicationSlotControl", NULL, "CommitTs", "ReplicationOrigin", "MultiXactTruncation",
	NULL, "LogicalRepWorker", "XactTruncation", NULL, "WrapLimitsVacuum", "NotifyQueueTail",
	"WaitEventCustom", "WALSummarizer", "DSMRegistry", "InjectionPoint", "SerialControl",
	"AioWorkerSubmissionQueue", "XactBuffer", "CommitTsBuffer", "SubtransBuffer",
	"MultiXactOffsetBuffer", "MultiXactMemberBuffer", "NotifyBuffer", "SerialBuffer",
	"WALInsert", "BufferContent", "ReplicationOriginState", "ReplicationSlotIO",
	"LockFastPath", "BufferMapping", "LockManager", "PredicateLockManager",
	"ParallelHashJoin", "ParallelBtreeScan", "ParallelQueryDSA", "PerSessionDSA",
	"PerSessionRecordType", "PerSessionRecordTypmod", "SharedTupleStore", "SharedTidBitmap",
	"ParallelAppend", "PerXactPredicateList", "PgStatsDSA", "PgStatsHash", "PgStatsData",
	"LogicalRepLauncherDSA", "LogicalRepLauncherHash", "DSMRegistryDSA", "DSMRegistryHash",
	"CommitTsSLRU", "MultiXactMemberSLRU", "MultiXactOffsetSLRU", "NotifySLRU", "SerialSLRU",
	"SubtransSLRU", "XactSLRU", "ParallelVacuumDSA", "AioUringCompletion",
};

static const char *const activity_18[] = {
	"ArchiverMain", "AutovacuumMain", "BgwriterHibernate", "BgwriterMain", "CheckpointerMain",
	"CheckpointerShutdown", "IoWorkerMain", "LogicalApplyMain", "LogicalLauncherMain",
	"LogicalParallelApplyMain", "RecoveryWalStream", "ReplicationSlotsyncMain",
	"ReplicationSlotsyncShutdown", "SysloggerMain", "WalReceiverMain", "WalSenderMain",
	"WalSummarizerWal", "WalWriterMain",
};

static const char *const ipc_18[] = {
	"AppendReady", "ArchiveCleanupCommand", "ArchiveCommand", "BackendTermination",
	"BackupWaitWalArchive", "BgworkerShutdown", "BgworkerStartup", "BtreePage", "BufferIo",
	"CheckpointDelayComplete", "CheckpointDelayStart", "CheckpointDone", "CheckpointStart",
	"ExecuteGather", "HashBatchAllocate", "HashBatchElect", "HashBatchLoad",
	"HashBuildAllocate", "HashBuildElect", "HashBuildHashInner", "HashBuildHashOuter",
	"HashGrowBatchesDecide", "HashGrowBatchesElect", "HashGrowBatchesFinish",
	"HashGrowBatchesReallocate", "HashGrowBatchesRepartition", "HashGrowBucketsElect",
	"HashGrowBucketsReallocate", "HashGrowBucketsReinsert", "LogicalApplySendData",
	"LogicalParallelApplyStateChange", "LogicalSyncData", "LogicalSyncStateChange",
	"MessageQueueInternal", "MessageQueuePutMessage", "MessageQueueReceive",
	"MessageQueueSend", "MultixactCreation", "ParallelBitmapScan", "ParallelCreateIndexScan",
	"ParallelFinish", "ProcarrayGroupUpdate", "ProcSignalBarrier", "Promote",
	"RecoveryConflictSnapshot", "RecoveryConflictTablespace", "RecoveryEndCommand",
	"RecoveryPause", "ReplicationOriginDrop", "ReplicationSlotDrop", "RestoreCommand",
	"SafeSnapshot", "SyncRep", "WalReceiverExit", "WalReceiverWaitStart", "WalSummaryReady",
	"XactGroupUpdate", "WalReceiverUpstreamCatchup",
};

static const char *const io_18[] = {
	"AioIoCompletion", "AioIoUringExecution", "AioIoUringSubmit", "BasebackupRead",
	"BasebackupSync", "BasebackupWrite", "BuffileRead", "BuffileTruncate", "BuffileWrite",
	"ControlFileRead", "ControlFileSync", "ControlFileSyncUpdate", "ControlFileWrite",
	"ControlFileWriteUpdate", "CopyFileCopy", "CopyFileRead", "CopyFileWrite",
	"DataFileExtend", "DataFileFlush", "DataFileImmediateSync", "DataFilePrefetch",
	"DataFileRead", "DataFileSync", "DataFileTruncate", "DataFileWrite", "DsmAllocate",
	"DsmFillZeroWrite", "LockFileAddtodatadirRead", "LockFileAddtodatadirSync",
	"LockFileAddtodatadirWrite", "LockFileCreateRead", "LockFileCreateSync",
	"LockFileCreateWrite", "LockFileRecheckdatadirRead", "LogicalRewriteCheckpointSync",
	"LogicalRewriteMappingSync", "LogicalRewriteMappingWrite", "LogicalRewriteSync",
	"LogicalRewriteTruncate", "LogicalRewriteWrite", "RelationMapRead", "RelationMapReplace",
	"RelationMapWrite", "ReorderBufferRead", "ReorderBufferWrite",
	"ReorderLogicalMappingRead", "ReplicationSlotRead", "ReplicationSlotRestoreSync",
	"ReplicationSlotSync", "ReplicationSlotWrite", "SlruFlushSync", "SlruRead", "SlruSync",
	"SlruWrite", "SnapbuildRead", "SnapbuildSync", "SnapbuildWrite",
	"TimelineHistoryFileSync", "TimelineHistoryFileWrite", "TimelineHistoryRead",
	"TimelineHistorySync", "TimelineHistoryWrite", "TwophaseFileRead", "TwophaseFileSync",
	"TwophaseFileWrite", "VersionFileSync", "VersionFileWrite",
	"WalsenderTimelineHistoryRead", "WalBootstrapSync", "WalBootstrapWrite", "WalCopyRead",
	"WalCopySync", "WalCopyWrite", "WalInitSync", "WalInitWrite", "WalRead", "WalSummaryRead",
	"WalSummaryWrite", "WalSync", "WalSyncMethodAssign", "WalWrite",
};

const struct pg_wait_names pg_wait_names_table[] = {
	{ 12, {
		[0x01] = { lwlock_12, 73 },
		[0x03] = { lock_12, 11 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_12, 14 },
		[0x06] = { client_12, 9 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_12, 37 },
		[0x09] = { timeout_12, 4 },
		[0x0A] = { io_12, 68 },
	} },
	{ 13, {
		[0x01] = { lwlock_13, 73 },
		[0x03] = { lock_13, 11 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_13, 13 },
		[0x06] = { client_13, 9 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_13, 42 },
		[0x09] = { timeout_13, 6 },
		[0x0A] = { io_12, 68 },
	} },
	{ 14, {
		[0x01] = { lwlock_14, 72 },
		[0x03] = { lock_13, 11 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_13, 13 },
		[0x06] = { client_14, 8 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_14, 47 },
		[0x09] = { timeout_14, 7 },
		[0x0A] = { io_14, 74 },
	} },
	{ 15, {
		[0x01] = { lwlock_15, 75 },
		[0x03] = { lock_13, 11 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_15, 12 },
		[0x06] = { client_14, 8 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_15, 51 },
		[0x09] = { timeout_15, 8 },
		[0x0A] = { io_15, 74 },
	} },
	{ 16, {
		[0x01] = { lwlock_16, 77 },
		[0x03] = { lock_16, 12 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_16, 13 },
		[0x06] = { client_14, 8 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_16, 53 },
		[0x09] = { timeout_16, 9 },
		[0x0A] = { io_16, 75 },
	} },
	{ 17, {
		[0x01] = { lwlock_17, 92 },
		[0x03] = { lock_16, 12 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_17, 16 },
		[0x06] = { client_17, 9 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_17, 57 },
		[0x09] = { timeout_17, 10 },
		[0x0A] = { io_17, 77 },
	} },
	{ 18, {
		[0x01] = { lwlock_18, 95 },
		[0x03] = { lock_16, 12 },
		[0x04] = { bufferpin_12, 1 },
		[0x05] = { activity_18, 18 },
		[0x06] = { client_17, 9 },
		[0x07] = { extension_12, 1 },
		[0x08] = { ipc_18, 58 },
		[0x09] = { timeout_17, 10 },
		[0x0A] = { io_18, 81 },
	} },
};

const int pg_wait_names_count = sizeof(pg_wait_names_table) / sizeof(pg_wait_names_table[0]);
