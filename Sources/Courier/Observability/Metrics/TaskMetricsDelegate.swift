#if canImport(Darwin)
import Foundation

extension TaskTimings {
    /// The timings of the task's last transaction (the one that produced the response, after any
    /// redirects), from Apple's `URLSessionTaskMetrics`.
    init(_ metrics: URLSessionTaskMetrics) {
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

/// A per-task URLSession delegate that forwards `URLSessionTaskMetrics` to the call's
/// ``TaskTimingsReporter`` (Apple platforms; Linux never delivers task metrics) and
/// `didSendBodyData` to the call's ``TransferProgressReporter`` (an upload's progress).
final class TaskMetricsDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let reporter: TaskTimingsReporter?
    private let progress: TransferProgressReporter?

    private init(reporter: TaskTimingsReporter?, progress: TransferProgressReporter?) {
        self.reporter = reporter
        self.progress = progress
    }

    /// A delegate for the call the current task is sending, or `nil` when no interceptor wants
    /// timings and nobody follows the progress (then no delegate is installed at all).
    static func forCurrentCall() -> TaskMetricsDelegate? {
        let timings = TaskTimingsReporter.current
        let progress = TransferProgressReporter.current
        guard timings != nil || progress != nil else { return nil }
        return TaskMetricsDelegate(reporter: timings, progress: progress)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        reporter?.report(TaskTimings(metrics))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        progress?.didSend(totalBytesSent, of: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
    }
}
#endif
