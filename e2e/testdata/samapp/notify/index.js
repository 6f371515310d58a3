exports.handler = async (event, context) => {
  return { notified: event.id, by: context.functionName, node: process.version.startsWith("v") };
};
