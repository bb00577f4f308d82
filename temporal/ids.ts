// Workflow ids are business keys an operator can read: one process per resource, never reused.
export const messageWorkflowId = (accountId: number, uid: string) => `message/${accountId}/${uid}`;
