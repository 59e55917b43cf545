import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fields of a `URLSessionTaskTransactionMetrics` that ``TaskTimings`` reads. A protocol, so
/// the mapping runs in tests on Linux, where URLSession never delivers task metrics.
protocol TransactionMetricsReading {
    var fetchStartDate: Date? { get }
    var domainLookupStartDate: Date? { get }
    var domainLookupEndDate: Date? { get }
    var connectStartDate: Date? { get }
    var connectEndDate: Date? { get }
    var secureConnectionStartDate: Date? { get }
    var secureConnectionEndDate: Date? { get }
    var requestStartDate: Date? { get }
    var requestEndDate: Date? { get }
    var responseStartDate: Date? { get }
    var responseEndDate: Date? { get }
    var isReusedConnection: Bool { get }
    var networkProtocolName: String? { get }
    var countOfRequestHeaderBytesSent: Int64 { get }
    var countOfRequestBodyBytesSent: Int64 { get }
    var countOfResponseHeaderBytesReceived: Int64 { get }
    var countOfResponseBodyBytesReceived: Int64 { get }
}

/// The fields of a `URLSessionTaskMetrics` that ``TaskTimings`` reads.
protocol TaskMetricsReading {
    associatedtype Transaction: TransactionMetricsReading
    var transactionMetrics: [Transaction] { get }
    var taskInterval: DateInterval { get }
    var redirectCount: Int { get }
}

extension URLSessionTaskTransactionMetrics: TransactionMetricsReading {}
extension URLSessionTaskMetrics: TaskMetricsReading {}

extension TaskTimings {
    /// The timings of the task's last transaction (the one that produced the response, after any
    /// redirects), from URLSession's task metrics.
    init(_ metrics: some TaskMetricsReading) {
        let last = metrics.transactionMetrics.last
        let instants = Instants(
            fetchStart: last?.fetchStartDate,
            domainLookupStart: last?.domainLookupStartDate, domainLookupEnd: last?.domainLookupEndDate,
            connectStart: last?.connectStartDate, connectEnd: last?.connectEndDate,
            secureConnectionStart: last?.secureConnectionStartDate, secureConnectionEnd: last?.secureConnectionEndDate,
            requestStart: last?.requestStartDate, requestEnd: last?.requestEndDate,
            responseStart: last?.responseStartDate, responseEnd: last?.responseEndDate)
        self.init(
            instants: instants,
            total: .seconds(metrics.taskInterval.duration),
            isReusedConnection: last?.isReusedConnection,
            networkProtocol: last?.networkProtocolName,
            redirectCount: metrics.redirectCount)
        if let last {
            requestHeaderBytesSent = last.countOfRequestHeaderBytesSent
            requestBodyBytesSent = last.countOfRequestBodyBytesSent
            responseHeaderBytesReceived = last.countOfResponseHeaderBytesReceived
            responseBodyBytesReceived = last.countOfResponseBodyBytesReceived
        }
    }
}

extension TransportSessionDelegate {
    /// Hands the task's metrics, as ``TaskTimings``, to the reporter of its call — when the
    /// platform delivers task metrics (``TransportCapabilities/deliversTaskMetrics``) and an
    /// interceptor asked for timings.
    func reportMetrics(_ id: Int, _ metrics: some TaskMetricsReading) {
        guard capabilities.deliversTaskMetrics, let timings = taskOptions.withLock({ $0[id]?.timings }) else { return }
        timings.report(TaskTimings(metrics))
    }
}
