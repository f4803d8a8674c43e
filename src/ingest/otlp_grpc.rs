//! OTLP/gRPC on its own listener (`listen.otlp_grpc`): the collector services
//! `LogsService`, `MetricsService` and `TraceService` (`opentelemetry-proto`'s tonic
//! stubs), for exporters whose default is gRPC (Gemini CLI; Claude Code with
//! `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`). Logs take the same path as over HTTP
//! (`otlp::store_logs`, `otlp::store_traces`, `otlp_metrics::store_metrics`).
//!
//! Invariants: the credential (`authorization: Bearer …` metadata) is checked before the
//! export is read; errors map to the gRPC codes OTLP names (UNAUTHENTICATED,
//! INVALID_ARGUMENT, UNAVAILABLE for storage that cannot take writes, which exporters
//! retry); messages over the ingest limit are refused by the transport; gzip is accepted.

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::logs::v1::logs_service_server::{LogsService, LogsServiceServer};
use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsServiceRequest, ExportLogsServiceResponse};
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use tonic::codec::CompressionEncoding;
use tonic::{Request, Response, Status};

use super::otlp_senders::{self, Sender, sender_of};
use crate::http::errors::AppError;
use crate::state::AppState;

/// The three collector services over one state.
#[derive(Clone)]
pub struct Receiver {
    state: Arc<AppState>,
}

impl Receiver {
    async fn caller<T>(&self, request: &Request<T>) -> Result<Sender, Status> {
        let secret = request
            .metadata()
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().strip_prefix("Bearer ").or_else(|| value.trim().strip_prefix("bearer ")))
            .map(|secret| secret.trim().to_string())
            .ok_or_else(|| {
                Status::unauthenticated("missing credentials: send authorization: Bearer <OTLP or hook token>")
            })?;
        sender_of(&self.state, secret).await.map_err(status)
    }
}

/// An error of ours as OTLP/gRPC answers it.
fn status(error: AppError) -> Status {
    let (http, message) = error.status_and_message();
    match http.as_u16() {
        401 => Status::unauthenticated(message),
        400 | 413 | 415 | 422 => Status::invalid_argument(message),
        503 => Status::unavailable(message),
        _ => Status::internal(message),
    }
}

#[tonic::async_trait]
impl LogsService for Receiver {
    async fn export(
        &self,
        request: Request<ExportLogsServiceRequest>,
    ) -> Result<Response<ExportLogsServiceResponse>, Status> {
        let received = std::time::Instant::now();
        let sender = self.caller(&request).await?;
        let answer = otlp_senders::logs(&self.state, &sender, request.get_ref(), received).await.map_err(status)?;
        Ok(Response::new(answer))
    }
}

#[tonic::async_trait]
impl MetricsService for Receiver {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<Response<ExportMetricsServiceResponse>, Status> {
        let sender = self.caller(&request).await?;
        let answer = otlp_senders::metrics(&self.state, &sender, request.get_ref()).await.map_err(status)?;
        Ok(Response::new(answer))
    }
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let received = std::time::Instant::now();
        let sender = self.caller(&request).await?;
        let answer = otlp_senders::traces(&self.state, &sender, request.get_ref(), received).await.map_err(status)?;
        Ok(Response::new(answer))
    }
}

/// Serves the collector services on `listener` until `shutdown` resolves.
pub async fn serve(
    state: Arc<AppState>,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), tonic::transport::Error> {
    let limit = state.config.ingest.max_decoded_bytes;
    let receiver = Receiver { state };
    tonic::transport::Server::builder()
        .add_service(
            LogsServiceServer::new(receiver.clone())
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(limit),
        )
        .add_service(
            MetricsServiceServer::new(receiver.clone())
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(limit),
        )
        .add_service(
            TraceServiceServer::new(receiver)
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(limit),
        )
        .serve_with_incoming_shutdown(tonic::transport::server::TcpIncoming::from(listener), shutdown)
        .await
}
