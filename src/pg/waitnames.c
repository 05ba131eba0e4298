/* Wait event names per PostgreSQL major version, as pg_stat_activity prints them. */
#include <stddef.h>

#include "pg/waitevent.h"

/*
 * One array per class and version, indexed by the event id (the low 16 bits of
 * wait_event_info); versions that print the same names share an array. NULL: an id
 * the version leaves unassigned. Written from each release's own wait event sources
 * (the enums' order is the id; 17+ sort the names of wait_event_names.txt and
 * camel-case them; LWLock ids are the individual locks, then the built-in tranches).
 */

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

static const char *const bufferpin_13[] = {
	"BufferPin",
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

static const char *const extension_13[] = {
	"Extension",
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

static const char *const io_13[] = {
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

static const char *const client_15[] = {
	"ClientRead", "ClientWrite", "GSSOpenServer", "LibPQWalReceiverConnect",
	"LibPQWalReceiverReceive", "SSLOpenServer", "WalSenderWaitForWAL", "WalSenderWriteData",
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
	"CommitTsSLRU", "MultiXactOffsetSLRU", "MultiXactMemberSLRU", "NotifySLRU", "SerialSLRU",
	"SubtransSLRU", "XactSLRU", "ParallelVacuumDSA", "AioUringCompletion",
};

static const char *const lock_18[] = {
	"relation", "extend", "frozenid", "page", "tuple", "transactionid", "virtualxid",
	"spectoken", "object", "userlock", "advisory", "applytransaction",
};

static const char *const activity_18[] = {
	"ArchiverMain", "AutovacuumMain", "BgwriterHibernate", "BgwriterMain", "CheckpointerMain",
	"CheckpointerShutdown", "IoWorkerMain", "LogicalApplyMain", "LogicalLauncherMain",
	"LogicalParallelApplyMain", "RecoveryWalStream", "ReplicationSlotsyncMain",
	"ReplicationSlotsyncShutdown", "SysloggerMain", "WalReceiverMain", "WalSenderMain",
	"WalSummarizerWal", "WalWriterMain",
};

static const char *const client_18[] = {
	"ClientRead", "ClientWrite", "GssOpenServer", "LibpqwalreceiverConnect",
	"LibpqwalreceiverReceive", "SslOpenServer", "WaitForStandbyConfirmation",
	"WalSenderWaitForWal", "WalSenderWriteData",
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

static const char *const timeout_18[] = {
	"BaseBackupThrottle", "CheckpointWriteDelay", "PgSleep", "RecoveryApplyDelay",
	"RecoveryRetrieveRetryInterval", "RegisterSyncRequest", "SpinDelay", "VacuumDelay",
	"VacuumTruncate", "WalSummarizerError",
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
	{ 13, {
		[0x01] = { lwlock_13, 73 },
		[0x03] = { lock_13, 11 },
		[0x04] = { bufferpin_13, 1 },
		[0x05] = { activity_13, 13 },
		[0x06] = { client_13, 9 },
		[0x07] = { extension_13, 1 },
		[0x08] = { ipc_13, 42 },
		[0x09] = { timeout_13, 6 },
		[0x0A] = { io_13, 68 },
	} },
	{ 15, {
		[0x01] = { lwlock_15, 75 },
		[0x03] = { lock_13, 11 },
		[0x04] = { bufferpin_13, 1 },
		[0x05] = { activity_15, 12 },
		[0x06] = { client_15, 8 },
		[0x07] = { extension_13, 1 },
		[0x08] = { ipc_15, 51 },
		[0x09] = { timeout_15, 8 },
		[0x0A] = { io_15, 74 },
	} },
	{ 18, {
		[0x01] = { lwlock_18, 95 },
		[0x03] = { lock_18, 12 },
		[0x04] = { bufferpin_13, 1 },
		[0x05] = { activity_18, 18 },
		[0x06] = { client_18, 9 },
		[0x07] = { extension_13, 1 },
		[0x08] = { ipc_18, 58 },
		[0x09] = { timeout_18, 10 },
		[0x0A] = { io_18, 81 },
	} },
};

const int pg_wait_names_count = sizeof(pg_wait_names_table) / sizeof(pg_wait_names_table[0]);
