/// What the call's logging interceptors recorded: the call's ``RecordJournal`` (shared by every
/// logging interceptor of the call, so a value hidden in the request is also hidden in the
/// response) and the latest request, response and error record. Kept in a field of the context's
/// state, not in typed slots: a logged call writes three of them, and a slot boxes its value.
struct CallRecords: Sendable {
    var journal: RecordJournal?
    var request: RecordSlot<RequestRecord>?
    var response: RecordSlot<ResponseRecord>?
    var error: RecordSlot<ErrorRecord>?
}

extension RequestContext {
    /// The redacted request as the ``LoggingInterceptor`` last saw it; `nil` when no logging
    /// interceptor ran or the endpoint's ``LoggingPolicy`` is ``LoggingPolicy/disabled``.
    /// Redacted when first read.
    public var requestRecord: RequestRecord? {
        get { withRecords({ $0.request })?.record }
        set { withRecords { $0.request = newValue.map { .built($0) } } }
    }

    /// The redacted response the ``LoggingInterceptor`` last saw. Redacted when first read.
    public var responseRecord: ResponseRecord? {
        get { withRecords({ $0.response })?.record }
        set { withRecords { $0.response = newValue.map { .built($0) } } }
    }

    /// The redacted error the ``LoggingInterceptor`` last saw, when an attempt or the call failed
    /// without a response. Redacted when first read.
    public var errorRecord: ErrorRecord? {
        get { withRecords({ $0.error })?.record }
        set { withRecords { $0.error = newValue.map { .built($0) } } }
    }

    /// How many of what the call's logging interceptors saw (requests, responses, errors) has been
    /// redacted so far: only what a logger writes, a recorder takes or someone reads, and what
    /// came before it (tests check this).
    package var redactedRecordCount: Int { withRecords { $0.journal }?.redactedCount ?? 0 }

    /// The call's record journal, created by the first logging interceptor that asks.
    var recordJournal: RecordJournal {
        let call = RecordJournal.Call(requestID: requestID, method: method, pathTemplate: pathTemplate)
        return withRecords { records in
            if let journal = records.journal { return journal }
            let journal = RecordJournal(call: call)
            records.journal = journal
            return journal
        }
    }
}
