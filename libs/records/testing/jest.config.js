module.exports = {
  displayName: 'records-testing',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
