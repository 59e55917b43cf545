/// The ``RequestContext`` slot holding the latest request record of the call.
enum RequestRecordKey: RequestContextKey {
    typealias Value = RecordSlot<RequestRecord>
}

/// The ``RequestContext`` slot holding the latest response record of the call.
enum ResponseRecordKey: RequestContextKey {
    typealias Value = RecordSlot<ResponseRecord>
}

/// The ``RequestContext`` slot holding the latest error record of the call.
enum ErrorRecordKey: RequestContextKey {
    typealias Value = RecordSlot<ErrorRecord>
}

/// The call's ``RecordJournal``, shared by every logging interceptor of the call so a value hidden
/// in the request is also hidden in the response. Internal: never exposed.
enum RecordJournalKey: RequestContextKey {
    typealias Value = RecordJournal
}

extension RequestContext {
    /// The redacted request as the ``LoggingInterceptor`` last saw it; `nil` when no logging
    /// interceptor ran or the endpoint's ``LoggingPolicy`` is ``LoggingPolicy/disabled``.
    /// Redacted when first read.
    public var requestRecord: RequestRecord? {
        get { record(in: RequestRecordKey.self) { $0.requestRecord(at: $1) } }
        set { self[RequestRecordKey.self] = newValue.map { .built($0) } }
    }

    /// The redacted response the ``LoggingInterceptor`` last saw. Redacted when first read.
    public var responseRecord: ResponseRecord? {
        get { record(in: ResponseRecordKey.self) { $0.responseRecord(at: $1) } }
        set { self[ResponseRecordKey.self] = newValue.map { .built($0) } }
    }

    /// The redacted error the ``LoggingInterceptor`` last saw, when an attempt or the call failed
    /// without a response. Redacted when first read.
    public var errorRecord: ErrorRecord? {
        get { record(in: ErrorRecordKey.self) { $0.errorRecord(at: $1) } }
        set { self[ErrorRecordKey.self] = newValue.map { .built($0) } }
    }

    /// The record in `key`'s slot: the one set by hand, or the one the call's journal builds with
    /// `build` (from the journal and the record's index) when read.
    private func record<Key: RequestContextKey, Record>(
        in key: Key.Type, build: (RecordJournal, Int) -> Record?
    ) -> Record? where Key.Value == RecordSlot<Record> {
        switch self[key] {
        case .built(let record): return record
        case .pending(let journal, let index): return build(journal, index)
        case nil: return nil
        }
    }

    /// How many of what the call's logging interceptors saw (requests, responses, errors) has been
    /// redacted so far: only what a logger writes, a recorder takes or someone reads, and what
    /// came before it (tests check this).
    package var redactedRecordCount: Int { self[RecordJournalKey.self]?.redactedCount ?? 0 }

    /// The call's record journal, created by the first logging interceptor that asks.
    var recordJournal: RecordJournal {
        value(for: RecordJournalKey.self) {
            RecordJournal(call: RecordJournal.Call(requestID: requestID, method: method, pathTemplate: pathTemplate))
        }
    }
}
