module.exports = {
  displayName: 'webhooks-data-access',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
