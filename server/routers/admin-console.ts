import { accountOverview } from '../../domain/use-cases/account-overview.ts';
import { findCommands } from '../../domain/use-cases/find-commands.ts';
import { getJob } from '../../domain/use-cases/get-job.ts';
import { listEndpoints } from '../../domain/use-cases/list-endpoints.ts';
import { searchAccounts } from '../../domain/use-cases/search-accounts.ts';
import { searchDeliveries } from '../../domain/use-cases/search-deliveries.ts';
import { gaugesOf } from '../gauges.ts';
import { adminProcedure } from '../pipeline/procedures.ts';
import { accountView, commandEntryView, contactView, deliveryView, jobView } from '../views.ts';
import { adminRoutes } from './admin.contract.ts';

// The operator console's procedures, by the admin sub-router each joins (admin.ts).

const { accounts, webhookConfigs, deliveries, commands, jobs, gauges } = adminRoutes;

export const consoleProcedures = {
  accounts: {
    search: adminProcedure
      .meta(accounts.search.meta)
      .input(accounts.search.input)
      .query(async ({ ctx, input }) => ({
        items: (await searchAccounts(ctx.deps, input)).map((m) => ({
          ...accountView(m.account),
          matchedEmails: m.matchedEmails,
        })),
      })),
    get: adminProcedure
      .meta(accounts.get.meta)
      .input(accounts.get.input)
      .query(async ({ ctx, input }) => {
        const o = await accountOverview(ctx.deps, input.accountId);
        return {
          ...accountView(o.account),
          parent: o.parent && accountView(o.parent),
          children: o.children.map(accountView),
          contacts: o.contacts.map(contactView),
          webhookConfigs: o.configs.map((c) => c.view()),
        };
      }),
  },
  webhookConfigs: {
    list: adminProcedure
      .meta(webhookConfigs.list.meta)
      .input(webhookConfigs.list.input)
      .query(async ({ ctx, input }) => ({
        items: (await listEndpoints(ctx.deps, input ?? {})).map((e) => ({
          ...e.config.view(),
          accountName: e.accountName,
        })),
      })),
  },
  deliveries: {
    search: adminProcedure
      .meta(deliveries.search.meta)
      .input(deliveries.search.input)
      .query(async ({ ctx, input }) => ({
        items: (await searchDeliveries(ctx.deps, input.by, input.limit)).map(deliveryView),
      })),
  },
  commands: {
    find: adminProcedure
      .meta(commands.find.meta)
      .input(commands.find.input)
      .query(async ({ ctx, input }) => ({ items: (await findCommands(ctx.deps, input.cid)).map(commandEntryView) })),
  },
  jobs: {
    get: adminProcedure
      .meta(jobs.get.meta)
      .input(jobs.get.input)
      .query(async ({ ctx, input }) => jobView(await getJob(ctx.deps, input.apiId))),
  },
  gauges: {
    summary: adminProcedure
      .meta(gauges.summary.meta)
      .input(gauges.summary.input)
      .query(async ({ ctx }) => ({ gauges: gaugesOf(await ctx.services.scrapeMetrics()) })),
  },
};
