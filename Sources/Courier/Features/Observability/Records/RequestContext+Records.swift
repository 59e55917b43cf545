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
        get {
            switch self[RequestRecordKey.self] {
            case .built(let record): return record
            case .pending(let journal, let index): return journal.requestRecord(at: index)
            case nil: return nil
            }
        }
        set { self[RequestRecordKey.self] = newValue.map { .built($0) } }
    }

    /// The redacted response the ``LoggingInterceptor`` last saw. Redacted when first read.
    public var responseRecord: ResponseRecord? {
        get {
            switch self[ResponseRecordKey.self] {
            case .built(let record): return record
            case .pending(let journal, let index): return journal.responseRecord(at: index)
            case nil: return nil
            }
        }
        set { self[ResponseRecordKey.self] = newValue.map { .built($0) } }
    }

    /// The redacted error the ``LoggingInterceptor`` last saw, when an attempt or the call failed
    /// without a response. Redacted when first read.
    public var errorRecord: ErrorRecord? {
        get {
            switch self[ErrorRecordKey.self] {
            case .built(let record): return record
            case .pending(let journal, let index): return journal.errorRecord(at: index)
            case nil: return nil
            }
        }
        set { self[ErrorRecordKey.self] = newValue.map { .built($0) } }
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
