import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';
import { Migration20261122010000_login_rate_limits } from './Migration20261122010000_login_rate_limits.ts';
import { Migration20261122020000_active_count_index } from './Migration20261122020000_active_count_index.ts';
import { Migration20261122030000_api_id_byte_order } from './Migration20261122030000_api_id_byte_order.ts';
import { Migration20261122040000_commands } from './Migration20261122040000_commands.ts';
import { Migration20261123000000_execution_and_delivery } from './Migration20261123000000_execution_and_delivery.ts';
import { Migration20261123010000_delivery_hot_updates } from './Migration20261123010000_delivery_hot_updates.ts';
import { Migration20261123020000_command_hot_claims } from './Migration20261123020000_command_hot_claims.ts';
import { Migration20261123030000_event_feed } from './Migration20261123030000_event_feed.ts';
import { Migration20261123040000_claim_with_created_at } from './Migration20261123040000_claim_with_created_at.ts';
import { Migration20261123050000_feed_purge_horizon } from './Migration20261123050000_feed_purge_horizon.ts';
import { Migration20261123060000_running_commands_idx } from './Migration20261123060000_running_commands_idx.ts';
import { Migration20261123070000_stream_slots } from './Migration20261123070000_stream_slots.ts';
import { Migration20261123080000_unlogged_counters } from './Migration20261123080000_unlogged_counters.ts';
import { Migration20261127100000_previous_signature_key } from './Migration20261127100000_previous_signature_key.ts';
import { Migration20261127110000_endpoint_health } from './Migration20261127110000_endpoint_health.ts';
import { Migration20261127120000_disabled_reason_backfill } from './Migration20261127120000_disabled_reason_backfill.ts';
import { Migration20261129100000_delivery_queue } from './Migration20261129100000_delivery_queue.ts';
import { Migration20261129110000_log_filters } from './Migration20261129110000_log_filters.ts';
import { Migration20261129120000_asymmetric_signing } from './Migration20261129120000_asymmetric_signing.ts';
import { Migration20261129130000_sequence_round } from './Migration20261129130000_sequence_round.ts';
import { Migration20261129140000_sequence_round_waiting } from './Migration20261129140000_sequence_round_waiting.ts';
import { Migration20261130000000_history_partitions } from './Migration20261130000000_history_partitions.ts';
import { Migration20261130010000_history_upkeep } from './Migration20261130010000_history_upkeep.ts';
import { Migration20261130020000_trace_context } from './Migration20261130020000_trace_context.ts';
import { Migration20261130030000_command_cid_index } from './Migration20261130030000_command_cid_index.ts';
import { Migration20261130040000_history_days_after } from './Migration20261130040000_history_days_after.ts';
import { Migration20261130050000_sequencing_by_key } from './Migration20261130050000_sequencing_by_key.ts';
import { Migration20261201000000_claim_by_endpoint } from './Migration20261201000000_claim_by_endpoint.ts';
import { Migration20261201010000_claim_skips_paused } from './Migration20261201010000_claim_skips_paused.ts';
import { Migration20261201020000_endpoint_last_ok } from './Migration20261201020000_endpoint_last_ok.ts';
import { Migration20261201030000_attempt_logged_once } from './Migration20261201030000_attempt_logged_once.ts';
import { Migration20261202000000_order_heads } from './Migration20261202000000_order_heads.ts';
import { Migration20261202010000_queue_flags_per_statement } from './Migration20261202010000_queue_flags_per_statement.ts';

/** Listed explicitly: no file globbing, so the same list works under tsx and from a build. */
export const migrationsList = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261122010000_login_rate_limits', class: Migration20261122010000_login_rate_limits },
  { name: 'Migration20261122020000_active_count_index', class: Migration20261122020000_active_count_index },
  { name: 'Migration20261122030000_api_id_byte_order', class: Migration20261122030000_api_id_byte_order },
  { name: 'Migration20261122040000_commands', class: Migration20261122040000_commands },
  { name: 'Migration20261123000000_execution_and_delivery', class: Migration20261123000000_execution_and_delivery },
  { name: 'Migration20261123010000_delivery_hot_updates', class: Migration20261123010000_delivery_hot_updates },
  { name: 'Migration20261123020000_command_hot_claims', class: Migration20261123020000_command_hot_claims },
  { name: 'Migration20261123030000_event_feed', class: Migration20261123030000_event_feed },
  { name: 'Migration20261123040000_claim_with_created_at', class: Migration20261123040000_claim_with_created_at },
  { name: 'Migration20261123050000_feed_purge_horizon', class: Migration20261123050000_feed_purge_horizon },
  { name: 'Migration20261123060000_running_commands_idx', class: Migration20261123060000_running_commands_idx },
  { name: 'Migration20261123070000_stream_slots', class: Migration20261123070000_stream_slots },
  { name: 'Migration20261123080000_unlogged_counters', class: Migration20261123080000_unlogged_counters },
  { name: 'Migration20261127100000_previous_signature_key', class: Migration20261127100000_previous_signature_key },
  { name: 'Migration20261127110000_endpoint_health', class: Migration20261127110000_endpoint_health },
  { name: 'Migration20261127120000_disabled_reason_backfill', class: Migration20261127120000_disabled_reason_backfill },
  { name: 'Migration20261129100000_delivery_queue', class: Migration20261129100000_delivery_queue },
  { name: 'Migration20261129110000_log_filters', class: Migration20261129110000_log_filters },
  { name: 'Migration20261129120000_asymmetric_signing', class: Migration20261129120000_asymmetric_signing },
  { name: 'Migration20261129130000_sequence_round', class: Migration20261129130000_sequence_round },
  {
    name: 'Migration20261129140000_sequence_round_waiting',
    class: Migration20261129140000_sequence_round_waiting,
  },
  { name: 'Migration20261130000000_history_partitions', class: Migration20261130000000_history_partitions },
  { name: 'Migration20261130010000_history_upkeep', class: Migration20261130010000_history_upkeep },
  { name: 'Migration20261130020000_trace_context', class: Migration20261130020000_trace_context },
  { name: 'Migration20261130030000_command_cid_index', class: Migration20261130030000_command_cid_index },
  { name: 'Migration20261130040000_history_days_after', class: Migration20261130040000_history_days_after },
  { name: 'Migration20261130050000_sequencing_by_key', class: Migration20261130050000_sequencing_by_key },
  { name: 'Migration20261201000000_claim_by_endpoint', class: Migration20261201000000_claim_by_endpoint },
  { name: 'Migration20261201010000_claim_skips_paused', class: Migration20261201010000_claim_skips_paused },
  { name: 'Migration20261201020000_endpoint_last_ok', class: Migration20261201020000_endpoint_last_ok },
  { name: 'Migration20261201030000_attempt_logged_once', class: Migration20261201030000_attempt_logged_once },
  { name: 'Migration20261202000000_order_heads', class: Migration20261202000000_order_heads },
  {
    name: 'Migration20261202010000_queue_flags_per_statement',
    class: Migration20261202010000_queue_flags_per_statement,
  },
];
