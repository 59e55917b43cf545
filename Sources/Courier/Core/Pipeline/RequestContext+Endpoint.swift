extension RequestContext {
    /// The context of one call of `endpoint`, as the client makes it for a buffered call,
    /// a streamed call and an upload: a fresh request ID, the endpoint's policy, method, logged path
    /// template, accepted statuses and start hook, and `traits`.
    package convenience init(for endpoint: some Endpoint, traits: CallTraits = CallTraits()) {
        self.init(
            requestID: RequestID(), policy: endpoint.policy, method: endpoint.method,
            pathTemplate: endpoint.loggedPathTemplate, pathTemplateIsDefault: endpoint.pathTemplate == nil,
            statusValidation: endpoint.statusValidation,
            startedAt: .now, onStart: endpoint.options.onStart, traits: traits)
    }
}
